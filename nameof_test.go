package factum_test

import (
	"sync"
	"testing"

	"github.com/factum-go/factum"
)

type ItemShipped struct{ SKU string }

type namedItself struct{}

func (namedItself) MessageName() string { return "custom_name" }

func TestNameOf(t *testing.T) {
	shipped := &ItemShipped{}
	tests := []struct {
		name string
		v    any
		want string
	}{
		{"struct", ItemShipped{SKU: "a"}, "item_shipped"},
		{"pointer", shipped, "item_shipped"},
		{"pointer to pointer", &shipped, "item_shipped"},
		{"MessageName", namedItself{}, "custom_name"},
		{"nil", nil, ""},
		{"unnamed type", map[string]int{}, ""},
		{"predeclared", 42, "int"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Twice: the first derives the name, the second meets the memo.
			for range 2 {
				if got := factum.NameOf(tt.v); got != tt.want {
					t.Fatalf("NameOf(%#v) = %q, want %q", tt.v, got, tt.want)
				}
			}
		})
	}
}

func TestNameOfConcurrent(t *testing.T) {
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				if got := factum.NameOf(&ItemShipped{}); got != "item_shipped" {
					t.Errorf("NameOf = %q", got)
					return
				}
			}
		})
	}
	wg.Wait()
}

// TestNameOfAllocations pins the per-command cost: naming a type seen
// before allocates nothing.
func TestNameOfAllocations(t *testing.T) {
	var body any = ItemShipped{SKU: "a"}
	factum.NameOf(body)
	if got := testing.AllocsPerRun(100, func() { _ = factum.NameOf(body) }); got != 0 {
		t.Fatalf("NameOf allocates %v times, want 0", got)
	}
}
