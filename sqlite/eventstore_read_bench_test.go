package sqlite

import (
	"context"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/internal/sqlstore"
)

// BenchmarkReadLogTail reads the last two streams of a 1,000-stream log,
// as a consumer keeping up with its appends does on every wake-up: through
// the store's prepared statement, and parsed anew on every call as it
// was, in the same run.
func BenchmarkReadLogTail(b *testing.B) {
	ctx := context.Background()
	db := newTestDB(b, Options{Synchronous: "NORMAL"})
	st := newTestEventStore(b, db, "shop", EventStoreOptions{})
	for i := range 1000 {
		if err := st.Append(ctx, testStream(esShopCart.WithID("a"), i+1, factum.NewID())); err != nil {
			b.Fatal(err)
		}
	}
	page, err := st.ReadLog(ctx, factum.Position{}, 1000)
	if err != nil || len(page) != 1000 {
		b.Fatalf("%d streams, %v", len(page), err)
	}
	after := page[len(page)-3].Position
	parsed := sqlstore.NewEventReads(&dialect, "shop", st.table, sqlstore.EventColumns, sqlstore.StdDB(db.Reader()), esScan)
	for _, c := range []struct {
		name string
		read func() ([]factum.EventStream, error)
	}{
		{"prepared", func() ([]factum.EventStream, error) { return st.ReadLog(ctx, after, 256) }},
		{"parsed", func() ([]factum.EventStream, error) {
			return parsed.Query(ctx, st.q.readLog, sqlstore.SeqArg(after.Seq), 256)
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if got, err := c.read(); err != nil || len(got) != 2 {
					b.Fatalf("%d streams, %v", len(got), err)
				}
			}
		})
	}
}
