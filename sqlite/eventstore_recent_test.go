package sqlite

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/internal/sqlstore"
	"github.com/factum-go/factum/internal/sqlstore/sqlstoretest"
)

// The held rows answer a read only with a full page of consecutive
// positions right after the reader's.
func TestRecentRowsAnswer(t *testing.T) {
	held := func(seqs ...int64) *esRecent {
		r := &esRecent{}
		for _, s := range seqs {
			r.add([]esRecentRow{{seq: s}})
		}
		return r
	}
	seqs := func(rows []esRecentRow) []int64 {
		var out []int64
		for _, x := range rows {
			out = append(out, x.seq)
		}
		return out
	}
	for _, c := range []struct {
		name         string
		r            *esRecent
		after        uint64
		limit        int
		want         []int64
		fromTheTable bool
	}{
		{"a full page", held(3, 4, 5), 2, 3, []int64{3, 4, 5}, false},
		{"limit rows of a longer run", held(3, 4, 5, 6), 2, 2, []int64{3, 4}, false},
		{"a run shorter than the page: another process may have appended after it", held(3, 4, 5), 3, 10, nil, true},
		{"nothing held after the position", held(3, 4, 5), 5, 10, nil, true},
		{"the next position is not held", held(3, 4, 5), 1, 2, nil, true},
		{"a gap inside the page", held(3, 4, 6), 2, 3, nil, true},
		{"a gap after limit rows", held(3, 4, 6), 2, 2, []int64{3, 4}, false},
		{"added out of order", held(5, 3, 4), 2, 3, []int64{3, 4, 5}, false},
		{"nothing held", held(), 0, 10, nil, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			rows, ok := c.r.rowsAfter(c.after, c.limit)
			if ok == c.fromTheTable {
				t.Fatalf("answered from memory: %v, want %v", ok, !c.fromTheTable)
			}
			if got := seqs(rows); !slices.Equal(got, c.want) {
				t.Errorf("positions %v, want %v", got, c.want)
			}
		})
	}
	r := &esRecent{}
	for s := range int64(esRecentMax + 10) {
		r.add([]esRecentRow{{seq: s + 1}})
	}
	if _, ok := r.rowsAfter(5, 1); ok {
		t.Error("a dropped row answered a read")
	}
	if rows, ok := r.rowsAfter(esRecentMax+8, 2); !ok || len(rows) != 2 {
		t.Errorf("the newest rows: %d, %v", len(rows), ok)
	}
}

// Large rows are kept up to esRecentBytes: the oldest are dropped once
// the rows' size passes it, and a row larger than the bound is not kept.
func TestRecentRowsAreBoundedByBytes(t *testing.T) {
	big := string(make([]byte, 1<<20)) // 1 MiB of events
	r := &esRecent{}
	for s := range int64(20) {
		r.add([]esRecentRow{{seq: s + 1, row: sqlstore.EventRow{Events: big}}})
		if r.bytes > esRecentBytes {
			t.Fatalf("after %d rows the kept rows hold %d bytes, more than %d", s+1, r.bytes, esRecentBytes)
		}
	}
	if n := len(r.rows); n == 0 || n > esRecentBytes>>20 {
		t.Errorf("%d rows of 1 MiB kept, want 1 to %d", n, esRecentBytes>>20)
	}
	if _, ok := r.rowsAfter(19, 1); !ok {
		t.Error("the newest row does not answer a read")
	}
	if _, ok := r.rowsAfter(2, 1); ok {
		t.Error("a dropped row answered a read")
	}
	r.add([]esRecentRow{{seq: 21, row: sqlstore.EventRow{Events: string(make([]byte, esRecentBytes))}}})
	if r.bytes > esRecentBytes {
		t.Errorf("a row over the bound is kept: %d bytes", r.bytes)
	}
	if _, ok := r.rowsAfter(20, 1); ok {
		t.Error("a row over the bound answered a read")
	}
}

// Every read of the log answers what the table holds, exactly, while two
// stores over the same table (as two processes would) append side by side
// and readers read on from their positions with small pages; and reads at
// full pages of the store's own latest rows are answered from memory.
func TestReadLogAnswersWhatTheTableHolds(t *testing.T) {
	ctx := context.Background()
	db := newTestDB(t, Options{Synchronous: "NORMAL"})
	a := newTestEventStore(t, db, "shop", EventStoreOptions{})
	b := newTestEventStore(t, db, "shop", EventStoreOptions{})
	table := func(after factum.Position, limit int) []factum.EventStream {
		t.Helper()
		page, err := a.reads.Query(ctx, a.q.readLog, sqlstore.SeqArg(after.Seq), limit)
		if err != nil {
			t.Fatal(err)
		}
		return page
	}

	var appends sync.WaitGroup
	for w, st := range []*EventStore{a, a, b} {
		appends.Go(func() {
			for i := range 40 {
				id := esShopCart.WithID(fmt.Sprintf("cart-%d-%d", w, i%8))
				if err := st.Append(ctx, sqlstoretest.Stream(id, i/8+1, factum.NewID())); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	var readers sync.WaitGroup
	done := make(chan struct{})
	for _, limit := range []int{1, 3, 256} {
		readers.Go(func() {
			var pos factum.Position
			for {
				select {
				case <-done:
					return
				default:
				}
				page, err := (*esLog)(a).ReadLog(ctx, pos, limit)
				if err != nil {
					t.Error(err)
					return
				}
				if len(page) == 0 {
					continue
				}
				// What the table holds at the page's positions, now.
				if want := table(pos, len(page)); !reflect.DeepEqual(page, want) {
					t.Errorf("after %v (limit %d): %d streams differing from the table's %d", pos, limit, len(page), len(want))
					return
				}
				pos = page[len(page)-1].Position
			}
		})
	}
	appends.Wait()
	close(done)
	readers.Wait()
	if a.recentReads.Load() == 0 {
		t.Error("no read was answered from memory")
	}
	// The whole log, read on from the start in pages, is the table's. A
	// page may stop short at the reading store's own last append, before
	// the other store's later ones, as a read that began before those
	// would: the next read finds them.
	var pos factum.Position
	n := 0
	for {
		page, err := (*esLog)(a).ReadLog(ctx, pos, 7)
		if err != nil {
			t.Fatal(err)
		}
		if len(page) == 0 {
			break
		}
		if want := table(pos, len(page)); !reflect.DeepEqual(page, want) {
			t.Fatalf("after %v: the page differs from the table's", pos)
		}
		n += len(page)
		pos = page[len(page)-1].Position
	}
	if n != 120 {
		t.Errorf("%d streams in the log, want 120", n)
	}
}
