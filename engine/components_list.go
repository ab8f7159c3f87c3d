package engine

import "slices"

// Components returns the engine's components (Config.Components), in
// order: a component finds the others it works with through it
// (compensation, the projections whose failures it retries).
func (r *Engine) Components() []Component { return slices.Clone(r.components.list) }
