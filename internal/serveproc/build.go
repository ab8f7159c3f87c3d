package serveproc

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// MainPackage is the import path of the factum binary.
const MainPackage = "github.com/factum-go/factum/cmd/factum"

// builder builds the binary once per test process: every test of a package
// runs the same code, and a build costs seconds.
type builder struct {
	once sync.Once
	dir  string
	path string
	err  error
}

var defaultBuilder builder

// Build compiles MainPackage into a temporary directory (once per process)
// and returns the binary's path. Call RemoveBuild when the process's tests
// are done (from TestMain).
func Build() (string, error) {
	b := &defaultBuilder
	b.once.Do(func() {
		dir, err := os.MkdirTemp("", "factum-serveproc-")
		if err != nil {
			b.err = err
			return
		}
		b.dir = dir
		b.path = filepath.Join(dir, "factum")
		cmd := exec.Command("go", "build", "-o", b.path, MainPackage)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			b.err = fmt.Errorf("serveproc: go build %s: %w\n%s", MainPackage, err, out)
		}
	})
	return b.path, b.err
}

// RemoveBuild deletes the binary Build made, if any. Processes started
// from it should have exited.
func RemoveBuild() error {
	if d := defaultBuilder.dir; d != "" {
		return os.RemoveAll(d)
	}
	return nil
}

// Main runs a test package's tests, then removes the binary Build made
// (saying so on stderr if it cannot), and exits with the tests' code: the
// body of the TestMain of a package whose tests start serve.
func Main(m *testing.M) {
	code := m.Run()
	if err := RemoveBuild(); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	os.Exit(code)
}
