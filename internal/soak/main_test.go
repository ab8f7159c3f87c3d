package soak_test

import (
	"os"
	"testing"

	"github.com/factum-go/factum/internal/serveproc"
)

// TestMain removes the serve binary the tests built.
func TestMain(m *testing.M) {
	code := m.Run()
	_ = serveproc.RemoveBuild()
	os.Exit(code)
}
