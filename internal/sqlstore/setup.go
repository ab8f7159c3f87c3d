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

// MigratorOf returns db as a Migrator, nil for a nil db: a nil pointer in
// the interface would not compare equal to nil, and Setup refuses a nil
// DB by that comparison.
func MigratorOf[DB any, P interface {
	*DB
	Migrator
}](db P) Migrator {
	if db == nil {
		return nil
	}
	return db
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

// SetupPrepare is the set-up of a prepare-key backend: it checks db and
// applies the prepare migrations of fsys (component "prepare", tables
// prefixed factum_). It returns how many prepares run between two lazy
// purges: purgeEvery, 1000 for 0, and 0 (no lazy purge) for a negative
// one.
func SetupPrepare(ctx context.Context, d *Dialect, db Migrator, fsys fs.FS, purgeEvery int) (uint64, error) {
	if db == nil {
		return 0, factum.IllegalArgument(d.Name + ": nil DB")
	}
	if purgeEvery == 0 {
		purgeEvery = 1000
	}
	if err := db.Migrate(ctx, fsys, "migrations/prepare", "prepare", "factum_"); err != nil {
		return 0, err
	}
	return uint64(max(purgeEvery, 0)), nil
}

// ContextTable returns the quoted name of the table of boundedContext
// called name: factum_<context>_<name>.
func ContextTable(boundedContext, name string) string {
	return `"factum_` + boundedContext + `_` + name + `"`
}
