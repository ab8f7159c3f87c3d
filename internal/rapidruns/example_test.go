package rapidruns_test

import (
	"flag"
	"testing"

	"github.com/factum-go/factum/internal/rapidruns"
)

func TestLimit(t *testing.T) {
	t.Run("limited", func(t *testing.T) {
		rapidruns.Limit(t, 7)
		if got := flag.Lookup("rapid.checks").Value.String(); got != "7" {
			t.Fatalf("rapid.checks = %s, want 7", got)
		}
	})
	if got := flag.Lookup("rapid.checks").Value.String(); got == "7" {
		t.Fatal("the limit outlived its test")
	}
}
