package redisserver_test

import (
	"testing"

	"github.com/factum-go/factum/internal/redisserver"
)

// Start a private server with the append-only file fsynced on every
// write, kill it and start it again. (Compiled, not run: it needs a test.)
func Example() {
	var t *testing.T // a test's t
	srv := redisserver.Start(t, redisserver.AOFAlways)
	srv.Kill()
	_ = srv.Start()
	_ = srv.URL()
}
