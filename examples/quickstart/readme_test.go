package quickstart_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// readmeSnippet returns the first Go block after the heading in README.md.
func readmeSnippet(t *testing.T, readme, heading string) string {
	t.Helper()
	_, rest, ok := strings.Cut(readme, "\n"+heading+"\n")
	if !ok {
		t.Fatalf("README.md has no heading %q", heading)
	}
	_, rest, ok = strings.Cut(rest, "```go\n")
	if !ok {
		t.Fatalf("no Go block after %q", heading)
	}
	code, _, ok := strings.Cut(rest, "```")
	if !ok {
		t.Fatalf("the Go block after %q does not end", heading)
	}
	return code
}

// TestReadmeSnippetCompiles builds the README's "Write your own aggregate"
// block exactly as a user pastes it: a main package in a module of its own
// that requires factum (replaced by this checkout).
func TestReadmeSnippetCompiles(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a program")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	code := readmeSnippet(t, string(readme), "## Write your own aggregate")
	if !strings.HasPrefix(code, "package main\n") {
		t.Fatalf("the snippet is not a complete program (no package clause):\n%s", code)
	}
	dir := t.TempDir()
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"main.go": code,
		"go.mod": "module readme\n\ngo 1.26.0\n\nrequire github.com/factum-go/factum v0.0.0\n\n" +
			"replace github.com/factum-go/factum => " + root + "\n",
		"go.sum": string(sum),
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to build the snippet: %v", err)
	}
	for _, args := range [][]string{{"build", "-o", os.DevNull, "."}, {"vet", "."}} {
		cmd := exec.CommandContext(t.Context(), goTool, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod", "GOPROXY=off")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go %s: %v\n%s\nsnippet:\n%s", strings.Join(args, " "), err, out, code)
		}
	}
}
