package query

import (
	"fmt"
	"strings"
)

// MaxPathLen bounds the length of a field path in bytes.
const MaxPathLen = 256

// ValidatePath checks a field path against the allow-list: one or more
// segments of ASCII letters, digits and '_', separated by '.', at most
// MaxPathLen bytes. Each segment names an object key, even one made of
// digits: paths never index into arrays (OpElemMatch and OpAllIn test
// arrays). Because only these characters pass, a valid path can stand in
// SQL JSON-path text without escaping.
func ValidatePath(path string) error {
	if msg := pathProblem(path); msg != "" {
		return illegal(msg)
	}
	return nil
}

// checkPath validates a path, naming where it was found in the error.
func checkPath(where, path string) error {
	if msg := pathProblem(path); msg != "" {
		return illegal(where + ": " + msg)
	}
	return nil
}

// pathProblem describes what is wrong with path, or returns "".
func pathProblem(path string) string {
	if path == "" {
		return "field path is empty"
	}
	if len(path) > MaxPathLen {
		return fmt.Sprintf("field path %.20q... is longer than %d bytes", path, MaxPathLen)
	}
	seg := 0
	for i := 0; i < len(path); i++ {
		c := path[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_':
			seg++
		case c == '.' && seg > 0 && i < len(path)-1:
			seg = 0
		default:
			return fmt.Sprintf("field path %q: character %q at %d is not allowed (dotted names of A-Z, a-z, 0-9 and '_')", path, c, i)
		}
	}
	return ""
}

// SplitPath returns the segments of a valid path; the empty path (an
// element itself, inside OpElemMatch) has none.
func SplitPath(path string) []string {
	if path == "" {
		return nil
	}
	return strings.Split(path, ".")
}

// lookup follows segs from v through objects. It reports whether the value
// is present; a segment meeting anything but an object finds nothing.
func lookup(v any, segs []string) (any, bool) {
	for _, s := range segs {
		m, ok := v.(map[string]any)
		if !ok {
			if d, isDoc := v.(Document); isDoc {
				m = d
			} else {
				return nil, false
			}
		}
		if v, ok = m[s]; !ok {
			return nil, false
		}
	}
	return v, true
}
