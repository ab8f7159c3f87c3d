package sqlstore

import (
	"context"
	"io/fs"

	"github.com/factum-go/factum"
)

// Migrator applies a component's schema migrations; each backend's DB is
// one.
type Migrator interface {
	Migrate(ctx context.Context, fsys fs.FS, dir, component, prefix string) error
}

// Component is the schema of a store of one bounded context: its
// migrations, in the folder migrations/<Name> of FS, and the table of the
// context the store is named after.
type Component struct {
	Name  string
	FS    fs.FS
	Table string
}

// Setup is the set-up every store of a bounded context shares: it checks
// db and the context's name, applies c's migrations if they are not
// applied yet (component "<name>:<context>", tables prefixed
// factum_<context>_) and returns the quoted name of c's table.
func Setup(ctx context.Context, d *Dialect, db Migrator, c Component, boundedContext string) (string, error) {
	if db == nil {
		return "", factum.IllegalArgument(d.Name + ": nil DB")
	}
	if err := d.ValidContext(boundedContext); err != nil {
		return "", err
	}
	prefix := "factum_" + boundedContext + "_"
	if err := db.Migrate(ctx, c.FS, "migrations/"+c.Name, c.Name+":"+boundedContext, prefix); err != nil {
		return "", err
	}
	return ContextTable(boundedContext, c.Table), nil
}

// ContextTable returns the quoted name of the table of boundedContext
// called name: factum_<context>_<name>.
func ContextTable(boundedContext, name string) string {
	return `"factum_` + boundedContext + `_` + name + `"`
}
