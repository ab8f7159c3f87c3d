package sqlmigrate

import (
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"
)

// Migration is one versioned step of one component.
type Migration struct {
	// Component names the schema the step belongs to, such as
	// "eventstore:shop"; versions are numbered per component.
	Component string
	// Version is the step's number, from 1.
	Version int
	// Name is the file's description part.
	Name string
	// SQL is the statement text with placeholders replaced.
	SQL string
}

// Load reads the migrations of component from dir in fsys, replacing
// {{prefix}} by prefix. It fails on a malformed file name, a duplicate
// version or a gap in the versions.
func Load(fsys fs.FS, dir, component, prefix string) ([]Migration, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, fmt.Errorf("sqlmigrate: read %s: %w", dir, err)
	}
	var out []Migration
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".sql") {
			continue
		}
		num, name, ok := strings.Cut(strings.TrimSuffix(e.Name(), ".sql"), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v < 1 {
			return nil, fmt.Errorf("sqlmigrate: %s: want NNNN_description.sql", e.Name())
		}
		b, err := fs.ReadFile(fsys, path.Join(dir, e.Name()))
		if err != nil {
			return nil, fmt.Errorf("sqlmigrate: %w", err)
		}
		out = append(out, Migration{
			Component: component,
			Version:   v,
			Name:      name,
			SQL:       strings.ReplaceAll(string(b), "{{prefix}}", prefix),
		})
	}
	slices.SortFunc(out, func(a, b Migration) int { return a.Version - b.Version })
	for i, m := range out {
		if m.Version != i+1 {
			return nil, fmt.Errorf("sqlmigrate: %s: version %d found where %d was expected (duplicate or gap)", dir, m.Version, i+1)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("sqlmigrate: %s holds no migrations", dir)
	}
	return out, nil
}
