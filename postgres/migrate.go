package postgres

import (
	"context"
	"embed"
	"fmt"
	"io/fs"

	"github.com/factum-go/factum/internal/sqlmigrate"
	"github.com/jackc/pgx/v5"
)

// migrations holds every component's schema migrations, a folder each.
//
//go:embed migrations
var migrations embed.FS

// migrationLock is the advisory lock key under which migrations run:
// the first eight bytes of "factummg".
const migrationLock int64 = 0x666163746d756d67

// withLock runs fn in a transaction holding the migration advisory lock,
// scoped to the schema so that tests in separate schemas do not wait on
// each other.
func (d *DB) withLock(ctx context.Context, fn func(pgx.Tx) error) error {
	tx, err := d.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("postgres: begin migration: %w", err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, hashtext($2))`, int32(migrationLock>>32), d.schema); err != nil {
		return fmt.Errorf("postgres: take migration lock: %w", err)
	}
	if err := fn(tx); err != nil {
		return err
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("postgres: commit migration: %w", err)
	}
	return nil
}

// Migrate applies the migrations of component found in dir of fsys (see
// package internal/sqlmigrate for the file layout), replacing {{prefix}} by
// prefix. All steps run in one transaction holding an advisory lock, so
// concurrent callers, in this process or another, apply each step exactly
// once, and a failing step leaves nothing half-applied.
//
// Components call it from their constructors; applications rarely need to.
func (d *DB) Migrate(ctx context.Context, fsys fs.FS, dir, component, prefix string) error {
	ms, err := sqlmigrate.Load(fsys, dir, component, prefix)
	if err != nil {
		return err
	}
	return d.withLock(ctx, func(tx pgx.Tx) error {
		for _, m := range ms {
			var n int
			if err := tx.QueryRow(ctx, `SELECT count(*) FROM factum_migrations WHERE component = $1 AND version = $2`,
				m.Component, m.Version).Scan(&n); err != nil {
				return fmt.Errorf("postgres: migrate %s %d: %w", m.Component, m.Version, err)
			}
			if n > 0 {
				continue
			}
			if _, err := tx.Exec(ctx, m.SQL); err != nil {
				return fmt.Errorf("postgres: migrate %s %d (%s): %w", m.Component, m.Version, m.Name, err)
			}
			if _, err := tx.Exec(ctx, `INSERT INTO factum_migrations (component, version, name) VALUES ($1, $2, $3)`,
				m.Component, m.Version, m.Name); err != nil {
				return fmt.Errorf("postgres: record migration %s %d: %w", m.Component, m.Version, err)
			}
		}
		return nil
	})
}
