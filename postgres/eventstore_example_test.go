package postgres_test

import (
	"context"
	"log"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/postgres"
)

// NewEventStore needs a running server, so this example is compiled but
// not run. It reads the global log the way a consumer does: from the last
// position handled, waiting when it has read everything.
func ExampleNewEventStore() {
	ctx := context.Background()
	db := openExample(ctx)
	defer db.Close()
	store, err := postgres.NewEventStore(ctx, db, "shop", postgres.EventStoreOptions{})
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()

	var checkpoint factum.Position // saved durably by a real consumer
	for {
		streams, err := store.ReadLog(ctx, checkpoint, 100)
		if err != nil {
			log.Fatal(err)
		}
		for _, s := range streams {
			log.Printf("%s v%d: %d events", s.AggregateID, s.Version, len(s.Events))
			checkpoint = s.Position
		}
		if len(streams) == 0 {
			if err := store.WaitLog(ctx, checkpoint); err != nil {
				log.Fatal(err)
			}
		}
	}
}
