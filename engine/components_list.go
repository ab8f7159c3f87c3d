package engine

// Components returns the engine's configured components
// (Config.Components), in order: a component finds the others it works
// with through it (compensation, the projections whose failures it
// retries). The default snapshotter is not among them.
func (r *Engine) Components() []Component {
	out := make([]Component, 0, len(r.components.list))
	for _, m := range r.components.list {
		if m.comp != nil {
			out = append(out, m.comp)
		}
	}
	return out
}
