package aggregatetest

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/factum-go/factum/aggregate"
	"github.com/factum-go/factum/codec"
)

// updateNames makes LockNames write the golden file instead of checking
// it: go test -run <the test> -update-names.
var updateNames = flag.Bool("update-names", false, "aggregatetest.LockNames: write the golden files of message names instead of checking them")

// goldenHeader opens every golden file LockNames writes.
const goldenHeader = "# The message names stored in events and commands; LockNames checks them.\n" +
	"# A name that changes orphans what is stored under it: rename on purpose only\n" +
	"# (with an upcaster or a migration), then run go test -update-names.\n"

// LockNames fails t unless the names registered in reg are exactly those
// listed in the golden file (one per line, sorted; lines starting with #
// are comments). Stored events and commands are found by these names, so a
// Go rename that changes a derived name (a type without a MessageName
// method, named after its Go name) would orphan everything stored under
// the old one; LockNames catches that in a test. A name missing from reg
// is reported as a break; a new one as a name to add. With -update-names
// it writes the file instead (creating its directory).
//
// Build reg as the engine does, from the aggregate types (and the event
// types the application's processors consume):
//
//	reg := codec.NewRegistry()
//	types, _ := aggregate.NewRegistry(Carts, Orders)
//	_ = types.Register(reg)
//	aggregatetest.LockNames(t, reg, "testdata/names.golden")
func LockNames(t testing.TB, reg *codec.Registry, golden string) {
	t.Helper()
	names := reg.Names()
	slices.Sort(names)
	if *updateNames {
		var b bytes.Buffer
		b.WriteString(goldenHeader)
		for _, n := range names {
			b.WriteString(n)
			b.WriteByte('\n')
		}
		if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
			t.Fatalf("LockNames: %v", err)
		}
		if err := os.WriteFile(golden, b.Bytes(), 0o644); err != nil {
			t.Fatalf("LockNames: %v", err)
		}
		return
	}
	raw, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("LockNames: %v (run go test -update-names to write it)", err)
	}
	var want []string
	for line := range strings.Lines(string(raw)) {
		line = strings.TrimSpace(line)
		if line != "" && !strings.HasPrefix(line, "#") {
			want = append(want, line)
		}
	}
	var gone, added []string
	for _, n := range want {
		if !slices.Contains(names, n) {
			gone = append(gone, n)
		}
	}
	for _, n := range names {
		if !slices.Contains(want, n) {
			added = append(added, n)
		}
	}
	var msg strings.Builder
	if len(gone) > 0 {
		fmt.Fprintf(&msg, "message names in %s are no longer registered: %s\n"+
			"(renamed a Go type without a MessageName method? what is stored under the old name no longer decodes)\n",
			golden, strings.Join(gone, ", "))
	}
	if len(added) > 0 {
		fmt.Fprintf(&msg, "message names not in %s: %s (run go test -update-names to add them)\n", golden, strings.Join(added, ", "))
	}
	if msg.Len() > 0 {
		t.Error(msg.String())
	}
}

// LockTypeNames is LockNames over the commands and events of types,
// registered as the engine registers them: the golden-name check of an
// application's aggregate types in one call.
//
//	func TestStoredNames(t *testing.T) {
//		aggregatetest.LockTypeNames(t, "testdata/names.golden", Carts, Orders)
//	}
func LockTypeNames(t testing.TB, golden string, types ...aggregate.Type) {
	t.Helper()
	reg, err := aggregate.NewRegistry(types...)
	if err != nil {
		t.Fatalf("LockTypeNames: %v", err)
		return
	}
	names := codec.NewRegistry()
	if err := reg.Register(names); err != nil {
		t.Fatalf("LockTypeNames: %v", err)
		return
	}
	LockNames(t, names, golden)
}
