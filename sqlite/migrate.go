package sqlite

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"time"

	"github.com/factum-go/factum/internal/sqlmigrate"
)

// migrations holds every component's schema migrations, a folder each.
//
//go:embed migrations
var migrations embed.FS

// Migrate applies the migrations of component found in dir of fsys (see
// package internal/sqlmigrate for the file layout), replacing {{prefix}} by
// prefix. Each step runs in its own IMMEDIATE transaction, which takes
// SQLite's write lock before reading the migrations table, so concurrent
// callers, in this process or another, apply each step exactly once.
//
// Components call it from their constructors; applications rarely need to.
func (d *DB) Migrate(ctx context.Context, fsys fs.FS, dir, component, prefix string) error {
	ms, err := sqlmigrate.Load(fsys, dir, component, prefix)
	if err != nil {
		return err
	}
	for _, m := range ms {
		if err := d.apply(ctx, m); err != nil {
			return err
		}
	}
	return nil
}

func (d *DB) apply(ctx context.Context, m sqlmigrate.Migration) error {
	tx, err := d.writer.BeginTx(ctx, nil) // _txlock=immediate: BEGIN IMMEDIATE
	if err != nil {
		return fmt.Errorf("sqlite: migrate %s %d: %w", m.Component, m.Version, err)
	}
	defer tx.Rollback()
	var n int
	if err := tx.QueryRowContext(ctx,
		`SELECT count(*) FROM factum_migrations WHERE component = ? AND version = ?`,
		m.Component, m.Version).Scan(&n); err != nil {
		return fmt.Errorf("sqlite: migrate %s %d: %w", m.Component, m.Version, err)
	}
	if n > 0 {
		return nil
	}
	if _, err := tx.ExecContext(ctx, m.SQL); err != nil {
		return fmt.Errorf("sqlite: migrate %s %d (%s): %w", m.Component, m.Version, m.Name, err)
	}
	if _, err := tx.ExecContext(ctx,
		`INSERT INTO factum_migrations (component, version, name, applied_at) VALUES (?, ?, ?, ?)`,
		m.Component, m.Version, m.Name, time.Now().UTC().Format(time.RFC3339Nano)); err != nil {
		return fmt.Errorf("sqlite: record migration %s %d: %w", m.Component, m.Version, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlite: migrate %s %d: %w", m.Component, m.Version, err)
	}
	return nil
}
