package projection_test

import (
	"context"
	"encoding/json"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/sqlite"
)

// openExampleStore opens a SQLite database in a new temporary directory
// and the shop's projection store over it; closeAll closes the database
// and removes the directory. It ends the program on an error, as the
// examples do.
func openExampleStore(ctx context.Context, prefix string) (db *sqlite.DB, store *sqlite.ProjectionStore, closeAll func()) {
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		log.Fatal(err)
	}
	db, err = sqlite.Open(ctx, filepath.Join(dir, "factum.db"), sqlite.Options{})
	if err != nil {
		_ = os.RemoveAll(dir)
		log.Fatal(err)
	}
	closeAll = func() {
		db.Close()
		_ = os.RemoveAll(dir)
	}
	store, err = sqlite.NewProjectionStore(ctx, db, "shop")
	if err != nil {
		closeAll()
		log.Fatal(err)
	}
	return db, store, closeAll
}

// itemAddedStream returns a stream of one item_added event, version v of the
// aggregate id.
func itemAddedStream(id factum.AggregateID, v int) factum.EventStream {
	return factum.EventStream{ID: factum.NewID(), AggregateID: id, Version: v, CommandID: factum.NewID(),
		RequestID: factum.NewID(), CreateTime: time.Now(),
		Events: []factum.DomainEvent{{ID: factum.NewID(), Name: "item_added", Sequence: 1, IsLast: true, Body: json.RawMessage(`{}`)}}}
}

// appendItemAdded appends itemAddedStream(id, v) to events. It ends the program
// on an error, as the examples do.
func appendItemAdded(ctx context.Context, events eventstore.Store, id factum.AggregateID, v int) {
	s := itemAddedStream(id, v)
	if err := events.Append(ctx, &s); err != nil {
		log.Fatal(err)
	}
}
