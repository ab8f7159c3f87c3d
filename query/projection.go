package query

// Apply returns a deep copy of doc holding the fields p selects: with
// Include, only the values at those paths (and the objects leading to
// them); then without every Exclude path. A path that is missing, or that
// runs into a non-object, selects or removes nothing. Changing the result
// never changes doc. Use a Plan's Projection, which keeps the ID field.
func (p Projection) Apply(doc Document) Document {
	var out map[string]any
	if len(p.Include) > 0 {
		out = make(map[string]any, len(p.Include))
		for _, path := range p.Include {
			segs := SplitPath(path)
			if v, ok := lookup(map[string]any(doc), segs); ok && len(segs) > 0 {
				setPath(out, segs, cloneValue(v))
			}
		}
	} else {
		out = cloneValue(map[string]any(doc)).(map[string]any)
	}
	for _, path := range p.Exclude {
		removePath(out, SplitPath(path))
	}
	return Document(out)
}

// setPath stores v at segs under m, creating the objects on the way.
func setPath(m map[string]any, segs []string, v any) {
	for _, s := range segs[:len(segs)-1] {
		next, ok := m[s].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[s] = next
		}
		m = next
	}
	m[segs[len(segs)-1]] = v
}

// removePath deletes the value at segs under m, if present.
func removePath(m map[string]any, segs []string) {
	if len(segs) == 0 {
		return
	}
	for _, s := range segs[:len(segs)-1] {
		next, ok := m[s].(map[string]any)
		if !ok {
			return
		}
		m = next
	}
	delete(m, segs[len(segs)-1])
}
