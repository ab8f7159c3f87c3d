package httpapi

import (
	"strconv"
	"unicode/utf8"
)

// parseNatural reads a whole number in canonical decimal form: ASCII
// digits only, no sign, no leading zero (but "0" itself), no spaces, at
// most max. Anything else, "+1" and "01" included, is refused: a number a
// client sends means one thing, written one way.
func parseNatural(s string, max int64) (int64, bool) {
	if s == "" || len(s) > 1 && s[0] == '0' {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n > max {
		return 0, false
	}
	return n, true
}

// validText reports whether a JSON body is text that decodes exactly:
// valid UTF-8, and no \u escape of a lone UTF-16 surrogate. Go's decoder
// would replace either with U+FFFD and store something other than what
// was sent.
func validText(b []byte) (ok bool, why string) {
	if !utf8.Valid(b) {
		return false, "is not valid UTF-8"
	}
	inString := false
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			inString = !inString
		case c == '\\' && inString && i+1 < len(b):
			if b[i+1] != 'u' {
				i++ // an escaped character, quote or backslash included
				continue
			}
			r, ok := hex4(b, i+2)
			if !ok {
				continue // malformed: the JSON decoder says so
			}
			switch {
			case r >= 0xDC00 && r <= 0xDFFF:
				return false, "holds a lone UTF-16 surrogate escape (not valid UTF-8 once decoded)"
			case r >= 0xD800 && r <= 0xDBFF:
				lo, ok := rune(0), false
				if i+7 < len(b) && b[i+6] == '\\' && b[i+7] == 'u' {
					lo, ok = hex4(b, i+8)
				}
				if !ok || lo < 0xDC00 || lo > 0xDFFF {
					return false, "holds a lone UTF-16 surrogate escape (not valid UTF-8 once decoded)"
				}
				i += 11
				continue
			}
			i += 5
		}
	}
	return true, ""
}

// hex4 reads four hex digits at b[i:].
func hex4(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}
