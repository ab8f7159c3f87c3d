package aggregatetest_test

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/factum-go/factum/aggregate/aggregatetest"
	"github.com/factum-go/factum/codec"
)

// tb records what LockNames reports instead of failing the test.
type tb struct {
	testing.TB
	errs []string
}

func (t *tb) Helper()           {}
func (t *tb) Error(args ...any) { t.errs = append(t.errs, fmt.Sprint(args...)) }
func (t *tb) Fatalf(format string, args ...any) {
	t.errs = append(t.errs, fmt.Sprintf(format, args...))
}

type OrderPlaced struct{}
type OrderShipped struct{}

func (OrderShipped) MessageName() string { return "order_shipped" }

// Renamed stands for OrderPlaced after a Go rename: its derived name
// changes.
type Renamed struct{}

func TestLockNames(t *testing.T) {
	golden := filepath.Join(t.TempDir(), "names.golden")
	if err := os.WriteFile(golden, []byte("# comment\norder_placed\norder_shipped\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		reg  func(*codec.Registry)
		want []string // substrings of the report; none means it passes
	}{
		{"same names", func(r *codec.Registry) {
			codec.MustRegister[OrderPlaced](r)
			codec.MustRegister[OrderShipped](r)
		}, nil},
		{"a Go rename", func(r *codec.Registry) {
			codec.MustRegister[Renamed](r)
			codec.MustRegister[OrderShipped](r)
		}, []string{"no longer registered: order_placed", "not in", "renamed"}},
		{"a new name", func(r *codec.Registry) {
			codec.MustRegister[OrderPlaced](r)
			codec.MustRegister[OrderShipped](r)
			codec.MustRegister[Renamed](r)
		}, []string{"not in", "renamed", "-update-names"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg := codec.NewRegistry()
			tt.reg(reg)
			fake := &tb{TB: t}
			aggregatetest.LockNames(fake, reg, golden)
			report := strings.Join(fake.errs, "\n")
			if len(tt.want) == 0 && report != "" {
				t.Fatalf("reported %q", report)
			}
			for _, w := range tt.want {
				if !strings.Contains(report, w) {
					t.Fatalf("report %q does not say %q", report, w)
				}
			}
		})
	}
	fake := &tb{TB: t}
	aggregatetest.LockNames(fake, codec.NewRegistry(), filepath.Join(t.TempDir(), "missing.golden"))
	if len(fake.errs) != 1 || !strings.Contains(fake.errs[0], "-update-names") {
		t.Fatalf("missing golden file: %v", fake.errs)
	}
}

// With -update-names LockNames writes the golden file, which then passes.
func TestLockNamesUpdate(t *testing.T) {
	if err := flag.Set("update-names", "true"); err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join(t.TempDir(), "sub", "names.golden")
	reg := codec.NewRegistry()
	codec.MustRegister[OrderShipped](reg)
	aggregatetest.LockNames(t, reg, golden)
	if err := flag.Set("update-names", "false"); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(golden)
	if err != nil || !strings.HasSuffix(string(b), "\norder_shipped\n") {
		t.Fatalf("golden %q, %v", b, err)
	}
	fake := &tb{TB: t}
	aggregatetest.LockNames(fake, reg, golden)
	if len(fake.errs) != 0 {
		t.Fatalf("reported %v after the update", fake.errs)
	}
}

// LockTypeNames checks the names the types register, and reports a set of
// types the engine would refuse.
func TestLockTypeNames(t *testing.T) {
	golden := filepath.Join(t.TempDir(), "names.golden")
	if err := os.WriteFile(golden, []byte("aggregate_deleted\naggregate_recovered\nbump\nbumped\ndelete_aggregate\nleak\nrecover_aggregate\nsecret\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	aggregatetest.LockTypeNames(t, golden, tallies)

	fake := &tb{TB: t}
	aggregatetest.LockTypeNames(fake, golden)
	if report := strings.Join(fake.errs, "\n"); !strings.Contains(report, "no longer registered: aggregate_deleted, aggregate_recovered, bump, bumped") {
		t.Fatalf("no types: reported %q", report)
	}
	fake = &tb{TB: t}
	aggregatetest.LockTypeNames(fake, golden, tallies, tallies)
	if len(fake.errs) != 1 || !strings.Contains(fake.errs[0], "registered twice") {
		t.Fatalf("a type twice: reported %v", fake.errs)
	}
}
