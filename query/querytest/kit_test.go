package querytest_test

import (
	"testing"

	"github.com/factum-go/factum/query/querytest"
)

func TestCorpusIntegrity(t *testing.T) {
	names := map[string]bool{}
	for _, c := range querytest.Cases() {
		if names[c.Name] {
			t.Errorf("case name %q is used twice", c.Name)
		}
		names[c.Name] = true
		if c.Kind < querytest.KindList || c.Kind > querytest.KindSingle {
			t.Errorf("case %q has no kind", c.Name)
		}
		if c.Err == "" && c.Kind != querytest.KindCount && c.IDs == nil && c.Documents == nil {
			t.Errorf("case %q expects nothing", c.Name)
		}
	}
	if len(names) < 200 {
		t.Errorf("the corpus has %d cases; it is meant to be thorough", len(names))
	}
}

func TestDatasetIsFresh(t *testing.T) {
	a := querytest.Dataset()
	a.Documents[0]["aggregateId"] = "changed"
	a.JSON[0][2] = 'X'
	b := querytest.Dataset()
	if b.Documents[0]["aggregateId"] != "d01" || b.JSON[0][2] != 'a' {
		t.Fatal("Dataset returns shared data")
	}
	if len(b.Documents) != 20 || len(b.JSON) != 20 {
		t.Fatalf("%d documents, %d JSON", len(b.Documents), len(b.JSON))
	}
	if got := b.Now.Weekday().String(); got != "Wednesday" {
		t.Errorf("the corpus clock is a %s; the date cases assume a Wednesday", got)
	}
}
