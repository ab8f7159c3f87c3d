package sqlstore

import "github.com/factum-go/factum"

// OneOptions returns the one Options value of a backend's Open (name is
// the backend's), the zero value when none is given, and an
// IllegalArgument error for more than one: Open's options are optional.
func OneOptions[O any](name string, options []O) (O, error) {
	var opts O
	switch len(options) {
	case 0:
	case 1:
		opts = options[0]
	default:
		return opts, factum.IllegalArgument(name + ": Open takes at most one Options")
	}
	return opts, nil
}
