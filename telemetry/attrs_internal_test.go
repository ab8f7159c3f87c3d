package telemetry

import (
	"fmt"
	"testing"

	"github.com/factum-go/factum"
)

// The span names are kept for a bounded number of aggregate types; past
// it they are made per call, still right.
func TestTypeNamesAreBounded(t *testing.T) {
	tel, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range maxTypeNames + 10 {
		named := factum.NamedAggregate{Context: "c", Aggregate: fmt.Sprintf("a%d", i)}
		if n := tel.names(named); n.send != "factum.send c."+named.Aggregate || n.process != "factum.process c."+named.Aggregate {
			t.Fatalf("names of %v: %+v", named, n)
		}
	}
	if got := tel.typeNameCount.Load(); got != maxTypeNames {
		t.Fatalf("%d type names kept, want %d", got, maxTypeNames)
	}
	kept := tel.names(factum.NamedAggregate{Context: "c", Aggregate: "a0"})
	if again := tel.names(factum.NamedAggregate{Context: "c", Aggregate: "a0"}); again != kept {
		t.Fatal("a kept type's names were made again")
	}
}
