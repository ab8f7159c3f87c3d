package auth

import (
	"bufio"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"os"
	"strings"
)

// KeySet holds API keys as SHA-256 hashes, each with its principal. It is
// immutable and safe for concurrent use.
//
// Keys are random secrets (NewKey makes 256-bit ones), so one unsalted
// SHA-256 is enough to make a stolen key file useless for logging in: no
// password-style stretching is needed, and none is done.
type KeySet struct {
	entries []keyEntry
	// byPrefix indexes entries by the first bytes of their hash, so a
	// check costs the same with ten keys or ten thousand.
	byPrefix map[[prefixBytes]byte][]int
}

// prefixBytes is how much of a hash indexes it.
const prefixBytes = 8

type keyEntry struct {
	hash      [sha256.Size]byte
	principal Principal
}

// HashPrefix starts every stored key hash.
const HashPrefix = "sha256:"

// HashKey returns the stored form of key: "sha256:" and the hex SHA-256
// of its bytes (what `printf %s "$KEY" | sha256sum` prints).
func HashKey(key string) string {
	h := sha256.Sum256([]byte(key))
	return HashPrefix + hex.EncodeToString(h[:])
}

// NewKey returns a new random API key: "fk_" and 32 random bytes in
// unpadded base64url.
func NewKey() (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("auth: new key: %w", err)
	}
	return "fk_" + base64.RawURLEncoding.EncodeToString(b[:]), nil
}

// ParseKeys reads API key entries, one per line (a ';' also ends an entry,
// so an environment variable can hold several on one line):
//
//	# comment
//	<name> sha256:<64 hex digits> [tenants=<t1>,<t2>…] roles=<r1>,<r2>…
//
// name is the principal's name (what audits record). Roles are send,
// read, operator and admin; tenants are required unless the roles include
// admin, which holds every tenant. Blank lines and lines starting with '#'
// are ignored. Names and hashes must be unique. Errors name the line, never
// its hash.
func ParseKeys(text string) (*KeySet, error) {
	ks := &KeySet{byPrefix: map[[prefixBytes]byte][]int{}}
	names := map[string]bool{}
	hashes := map[[sha256.Size]byte]bool{}
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		for entry := range strings.SplitSeq(sc.Text(), ";") {
			entry = strings.TrimSpace(entry)
			if entry == "" || strings.HasPrefix(entry, "#") {
				continue
			}
			e, err := parseKeyEntry(entry)
			if err != nil {
				return nil, fmt.Errorf("auth: API keys, line %d: %w", line, err)
			}
			if names[e.principal.Name] {
				return nil, fmt.Errorf("auth: API keys, line %d: name %q is used twice", line, e.principal.Name)
			}
			if hashes[e.hash] {
				return nil, fmt.Errorf("auth: API keys, line %d: the hash of %q is used twice", line, e.principal.Name)
			}
			names[e.principal.Name], hashes[e.hash] = true, true
			ks.add(e)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("auth: API keys: %w", err)
	}
	return ks, nil
}

// LoadKeys reads the key file at path (ParseKeys' format).
func LoadKeys(path string) (*KeySet, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("auth: API key file: %w", err)
	}
	return ParseKeys(string(b))
}

func parseKeyEntry(s string) (keyEntry, error) {
	var e keyEntry
	fields := strings.Fields(s)
	if len(fields) < 3 {
		return e, fmt.Errorf("want <name> sha256:<hex> [tenants=…] roles=…")
	}
	e.principal = Principal{Name: fields[0], Method: MethodAPIKey}
	if err := validName(e.principal.Name); err != nil {
		return e, err
	}
	hexHash, ok := strings.CutPrefix(fields[1], HashPrefix)
	if !ok {
		return e, fmt.Errorf("key %q: the second field must be sha256:<hex> (store the hash, never the key)", e.principal.Name)
	}
	h, err := hex.DecodeString(hexHash)
	if err != nil || len(h) != sha256.Size {
		return e, fmt.Errorf("key %q: the hash must be 64 hex digits", e.principal.Name)
	}
	copy(e.hash[:], h)
	for _, f := range fields[2:] {
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			return e, fmt.Errorf("key %q: %q: want tenants=… or roles=…", e.principal.Name, f)
		}
		switch k {
		case "tenants":
			e.principal.Tenants = splitComma(v)
		case "roles":
			for _, r := range splitComma(v) {
				role, err := ParseRole(r)
				if err != nil {
					return e, fmt.Errorf("key %q: %w", e.principal.Name, err)
				}
				e.principal.Roles = append(e.principal.Roles, role)
			}
		default:
			return e, fmt.Errorf("key %q: unknown field %q", e.principal.Name, k)
		}
	}
	return e, e.principal.validate()
}

func validName(n string) error {
	if n == "" || len(n) > 128 {
		return fmt.Errorf("a key name has 1 to 128 bytes")
	}
	for _, c := range n {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("._@:-", c)) {
			return fmt.Errorf("key name %q: use letters, digits and . _ @ : -", n)
		}
	}
	return nil
}

func splitComma(s string) []string {
	var out []string
	for p := range strings.SplitSeq(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func (ks *KeySet) add(e keyEntry) {
	ks.entries = append(ks.entries, e)
	p := [prefixBytes]byte(e.hash[:prefixBytes])
	ks.byPrefix[p] = append(ks.byPrefix[p], len(ks.entries)-1)
}

// Len returns the number of keys.
func (ks *KeySet) Len() int { return len(ks.entries) }

// Merge returns a set with the keys of ks and other; a name or hash in
// both is an error.
func (ks *KeySet) Merge(other *KeySet) (*KeySet, error) {
	out := &KeySet{byPrefix: map[[prefixBytes]byte][]int{}}
	names := map[string]bool{}
	hashes := map[[sha256.Size]byte]bool{}
	for _, e := range append(append([]keyEntry(nil), ks.entries...), other.entries...) {
		if names[e.principal.Name] || hashes[e.hash] {
			return nil, fmt.Errorf("auth: API key %q is configured twice", e.principal.Name)
		}
		names[e.principal.Name], hashes[e.hash] = true, true
		out.add(e)
	}
	return out, nil
}

// Verify returns the principal of key, or a *CredentialError ("unknown
// key"). The presented key's hash finds the stored hashes that share its
// first bytes, and is compared with each of them in constant time, without
// stopping at a match. The index reveals at most that a stored hash shares
// a prefix with the hash of the caller's own guess, which says nothing
// about any key; the comparison that decides reveals nothing.
func (ks *KeySet) Verify(key string) (Principal, error) {
	h := sha256.Sum256([]byte(key))
	found := -1
	for _, i := range ks.byPrefix[[prefixBytes]byte(h[:prefixBytes])] {
		eq := subtle.ConstantTimeCompare(h[:], ks.entries[i].hash[:])
		found = subtle.ConstantTimeSelect(eq, i, found)
	}
	if found < 0 {
		return Principal{}, &CredentialError{Method: MethodAPIKey, Reason: "unknown key"}
	}
	p := ks.entries[found].principal
	p.Tenants = append([]string(nil), p.Tenants...)
	p.Roles = append([]Role(nil), p.Roles...)
	return p, nil
}
