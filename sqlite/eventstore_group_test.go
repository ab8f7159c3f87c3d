package sqlite

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/internal/built"
	"github.com/factum-go/factum/snapshot"
)

// testGroup builds n one-event streams of id from version from, with the
// request IDs <prefix>-<version>.
func testGroup(id factum.AggregateID, from, n int, prefix string) []*factum.EventStream {
	ss := make([]*factum.EventStream, n)
	for i := range ss {
		ss[i] = testStream(id, from+i, fmt.Sprintf("%s-%d", prefix, from+i))
	}
	return ss
}

func markAll(ss []*factum.EventStream) []built.Stream {
	bs := make([]built.Stream, len(ss))
	for i, s := range ss {
		bs[i] = built.Mark(s)
	}
	return bs
}

// Groups queued in the DB's batcher beside an append and another store's
// write share their transaction: a group the store refuses rolls back to
// its savepoint alone, leaving the writes beside it committed in the same
// transaction; a write that fails (a checkpoint out of the column's range)
// rolls back the transaction, and every write, the groups included, is
// written again alone with its own outcome.
func TestWriteBatchGroups(t *testing.T) {
	for _, tc := range []struct {
		name        string
		failing     bool
		wantBatches uint64 // after the leader's
	}{
		{"one transaction", false, 1},
		{"a failing write alone", true, 1 + 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			s := newBatchStores(t)
			g := built.GroupOf(s.events)
			refusedID, okID, single := esShopCart.WithID("refused"), esShopCart.WithID("whole"), esShopCart.WithID("single")
			for _, st := range testGroup(refusedID, 1, 2, "r") {
				if err := s.events.Append(ctx, st); err != nil {
					t.Fatal(err)
				}
			}
			release, before := s.hold(t)

			appended := make(chan error, 1)
			go func() { appended <- s.events.Append(ctx, testStream(single, 1, "r-1")) }()
			waitFor(t, "the append is queued", func() bool { return s.queued() == 1 })

			refused := testGroup(refusedID, 3, 3, "r")
			refused[1].RequestID = "r-1" // version 1's: refused at index 1
			refusedErr := make(chan error, 1)
			go func() { refusedErr <- g.AppendBuiltGroup(ctx, markAll(refused)) }()
			waitFor(t, "the refused group is queued", func() bool { return s.queued() == 2 })

			whole := testGroup(okID, 1, 3, "r")
			wholeErr := make(chan error, 1)
			go func() { wholeErr <- g.AppendBuiltGroup(ctx, markAll(whole)) }()
			waitFor(t, "the whole group is queued", func() bool { return s.queued() == 3 })

			at := factum.Position{Seq: 1}
			if tc.failing {
				at.Seq = 1 << 63 // stored as a negative INTEGER: the CHECK refuses it
			}
			saved := make(chan error, 1)
			go func() {
				snaps := []snapshot.Snapshot{{AggregateID: single, Version: 1, State: json.RawMessage(`{"n":1}`)}}
				_, _, err := s.snaps.core.SaveBatchAt(ctx, snaps, s.cps, factum.Function{Context: "shop", Processor: "snapshotter"}, at)
				saved <- err
			}()
			waitFor(t, "the snapshot batch is queued", func() bool { return s.queued() == 4 })

			release()
			if err := <-appended; err != nil {
				t.Errorf("append: %v", err)
			}
			err := <-refusedErr
			var fe *factum.Error
			if !errors.Is(err, factum.ErrDuplicateRequestID) || !errors.As(err, &fe) || fe.Version != 4 || fe.RequestID != "r-1" {
				t.Errorf("refused group: %v, want DuplicateRequestId for version 4", err)
			}
			if err := <-wholeErr; err != nil {
				t.Errorf("whole group: %v", err)
			}
			if err := <-saved; (err != nil) != tc.failing {
				t.Errorf("snapshot batch: %v, failing %v", err, tc.failing)
			}
			if got := s.batches() - before; got != tc.wantBatches {
				t.Errorf("%d transactions after the leader's, want %d", got, tc.wantBatches)
			}

			for _, c := range []struct {
				id   factum.AggregateID
				want int
			}{{refusedID, 2}, {okID, 3}, {single, 1}} {
				got, err := s.events.Load(ctx, c.id, 1, 100)
				if err != nil {
					t.Fatal(err)
				}
				if len(got) != c.want {
					t.Errorf("%s: %d streams, want %d", c.id.ID, len(got), c.want)
				}
			}
			for i, st := range whole {
				if i > 0 && st.Position.Seq != whole[i-1].Position.Seq+1 {
					t.Errorf("the group's positions %v then %v are not consecutive", whole[i-1].Position, st.Position)
				}
			}
		})
	}
}
