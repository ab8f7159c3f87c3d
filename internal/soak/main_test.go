package soak_test

import (
	"testing"

	"github.com/factum-go/factum/internal/serveproc"
)

// TestMain removes the serve binary the tests built.
func TestMain(m *testing.M) { serveproc.Main(m) }
