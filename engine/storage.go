package engine

import (
	"context"
	"fmt"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/aggregate"
	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/snapshot"
)

// Storage is a backend that holds the stores of any number of bounded
// contexts, made and migrated on first use: sqlite.DB, postgres.DB and
// memory.Storage implement it. The engine asks it for the stores of its
// own context at New; closing them is the storage's business (its Close).
type Storage interface {
	// EventStore returns the event store of boundedContext.
	EventStore(ctx context.Context, boundedContext string) (eventstore.Store, error)
	// SnapshotStore returns the snapshot store of boundedContext.
	SnapshotStore(ctx context.Context, boundedContext string) (snapshot.QueryStore, error)
	// CheckpointStore returns the consumer-group checkpoints of
	// boundedContext.
	CheckpointStore(ctx context.Context, boundedContext string) (event.CheckpointStore, error)
}

// boundedContext returns the one context the aggregate types share. It is
// an IllegalArgument error for them to name two: a storage serves an
// engine one context's stores.
func boundedContext(types []aggregate.Type) (string, error) {
	var bc string
	for _, t := range types {
		c := t.Named().Context
		if bc == "" {
			bc = c
			continue
		}
		if c != bc {
			return "", factum.IllegalArgument(fmt.Sprintf(
				"engine: aggregate types of two bounded contexts (%q, %q) on one Storage: run an engine per context", bc, c))
		}
	}
	return bc, nil
}

// openStores fills the stores cfg leaves unset from cfg.Storage, for the
// context of types, so that a storage that cannot serve it fails New
// rather than the first append.
func openStores(ctx context.Context, cfg *Config, types []aggregate.Type) error {
	if cfg.Storage == nil {
		return nil
	}
	bc, err := boundedContext(types)
	if err != nil {
		return err
	}
	if cfg.Store == nil {
		if cfg.Store, err = cfg.Storage.EventStore(ctx, bc); err != nil {
			return fmt.Errorf("engine: the event store of %q: %w", bc, err)
		}
	}
	if cfg.SnapshotStore == nil {
		if cfg.SnapshotStore, err = cfg.Storage.SnapshotStore(ctx, bc); err != nil {
			return fmt.Errorf("engine: the snapshot store of %q: %w", bc, err)
		}
	}
	if cfg.Checkpoints == nil {
		if cfg.Checkpoints, err = cfg.Storage.CheckpointStore(ctx, bc); err != nil {
			return fmt.Errorf("engine: the checkpoints of %q: %w", bc, err)
		}
	}
	return nil
}
