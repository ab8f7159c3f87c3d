package serveproc_test

import (
	"context"
	"fmt"
	"os"

	"github.com/factum-go/factum/internal/serveproc"
)

// Build the binary, run serve on a fresh SQLite directory, kill it as a
// crash would, and start it again on the same data. (Compiled, not run:
// it builds the binary.)
func Example() {
	bin, err := serveproc.Build()
	if err != nil {
		panic(err)
	}
	dir, _ := os.MkdirTemp("", "serve-")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	p, err := serveproc.Start(ctx, serveproc.Options{Binary: bin, DataDir: dir})
	if err != nil {
		panic(err)
	}
	p.Kill()
	p, err = serveproc.Start(ctx, serveproc.Options{Binary: bin, DataDir: dir})
	if err != nil {
		panic(err)
	}
	defer p.Stop(0)
	fmt.Println(p.URL != "")
}
