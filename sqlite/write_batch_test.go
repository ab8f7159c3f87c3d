package sqlite

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/internal/sqlstore/sqlstoretest"
	"github.com/factum-go/factum/snapshot"
)

// batchStores are the stores of one context sharing a database whose
// write connection a blocker holds, so that their writes queue in the DB's
// batcher until the test lets it go.
type batchStores struct {
	db       *DB
	events   *EventStore
	snaps    *SnapshotStore
	cps      *CheckpointStore
	prepares *PrepareBackend
}

func newBatchStores(t *testing.T) *batchStores {
	t.Helper()
	ctx := context.Background()
	db := newTestDB(t, Options{})
	s := &batchStores{db: db, events: newTestEventStore(t, db, "shop", EventStoreOptions{})}
	s.snaps = sqlstoretest.Closed(NewSnapshotStore(ctx, db, "shop"))(t)
	s.cps = sqlstoretest.Closed(NewCheckpointStore(ctx, db, "shop"))(t)
	s.prepares = sqlstoretest.Must(NewPrepareBackend(ctx, db, PrepareOptions{}))(t)
	return s
}

// hold holds the DB's write connection until release, or until the test's
// cleanup lets it go before the stores close (so that a failing test does
// not leave their writes waiting), and starts a checkpoint save that leads
// the batcher's first batch and waits for the connection: what is written
// next queues behind it. release lets the connection go and fails the test
// if the leader's save fails; before is the count of transactions begun,
// the leader's included.
func (s *batchStores) hold(t *testing.T) (release func(), before uint64) {
	t.Helper()
	blocker, err := s.db.Writer().BeginTx(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { blocker.Rollback() })
	leader := make(chan error, 1)
	go func() {
		leader <- s.cps.SaveCheckpoint(context.Background(), factum.Function{Context: "shop", Processor: "leader"}, factum.Position{Seq: 1})
	}()
	waitFor(t, "the leader took its batch", func() bool {
		s.db.batch.mu.Lock()
		defer s.db.batch.mu.Unlock()
		return s.db.batch.leading && len(s.db.batch.queue) == 0
	})
	release = func() {
		t.Helper()
		if err := blocker.Rollback(); err != nil {
			t.Fatal(err)
		}
		if err := <-leader; err != nil {
			t.Fatalf("leader: %v", err)
		}
	}
	return release, s.batches()
}

// batches counts the transactions the DB's batcher has begun.
func (s *batchStores) batches() uint64 {
	s.db.batch.mu.Lock()
	defer s.db.batch.mu.Unlock()
	return s.db.batch.batches
}

func (s *batchStores) queued() int {
	s.db.batch.mu.Lock()
	defer s.db.batch.mu.Unlock()
	return len(s.db.batch.queue)
}

// A snapshot batch with its consumer's checkpoint, an append and a prepare
// key queued together behind a batch in flight are committed in one
// transaction. When one of them fails (here the checkpoint, out of the
// column's range, after its snapshot's statement ran), all of that write
// is rolled back, the snapshot with the checkpoint, and the writes beside
// it are committed each on its own, with their outcomes.
func TestWriteBatchAcrossStores(t *testing.T) {
	for _, tc := range []struct {
		name    string
		failing bool
		// extra transactions after the leader's: one shared, then one
		// per write when a write fails
		wantBatches uint64
	}{
		{"one transaction", false, 1},
		{"a failing write alone", true, 1 + 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			s := newBatchStores(t)
			group := factum.Function{Context: "shop", Processor: "snapshotter"}
			release, before := s.hold(t)

			cart := esShopCart.WithID("c-1")
			appended := make(chan error, 1)
			go func() { appended <- s.events.Append(ctx, testStream(cart, 1, "r-1")) }()
			waitFor(t, "the append is queued", func() bool { return s.queued() == 1 })

			at := factum.Position{Seq: 1}
			if tc.failing {
				at.Seq = 1 << 63 // stored as a negative INTEGER: the CHECK refuses it
			}
			type saveResult struct {
				saved  []bool
				joined bool
				err    error
			}
			saved := make(chan saveResult, 1)
			go func() {
				snaps := []snapshot.Snapshot{{AggregateID: cart, Version: 1, State: json.RawMessage(`{"n":1}`)}}
				// The shared code directly: the front refuses such a position.
				ok, joined, err := s.snaps.core.SaveBatchAt(ctx, snaps, s.cps, group, at)
				saved <- saveResult{ok, joined, err}
			}()
			waitFor(t, "the snapshot batch is queued", func() bool { return s.queued() == 2 })

			prepared := make(chan error, 1)
			go func() {
				ok, err := s.prepares.Prepare(ctx, "sku", "k", []byte(`"v"`), 1<<62)
				if err == nil && !ok {
					err = errors.New("key not taken")
				}
				prepared <- err
			}()
			waitFor(t, "the prepare is queued", func() bool { return s.queued() == 3 })

			release()
			if err := <-appended; err != nil {
				t.Errorf("append: %v", err)
			}
			if err := <-prepared; err != nil {
				t.Errorf("prepare: %v", err)
			}
			r := <-saved
			switch {
			case tc.failing && r.err == nil:
				t.Errorf("snapshot batch with an out-of-range checkpoint saved: %v, %v", r.saved, r.joined)
			case !tc.failing && (r.err != nil || !r.joined || len(r.saved) != 1 || !r.saved[0]):
				t.Errorf("snapshot batch = %v, %v, %v; want saved and joined", r.saved, r.joined, r.err)
			}
			if got := s.batches() - before; got != tc.wantBatches {
				t.Errorf("%d transactions after the leader's, want %d", got, tc.wantBatches)
			}

			if _, found, err := s.prepares.Get(ctx, "sku", "k"); !found || err != nil {
				t.Errorf("prepare key: found %v, %v", found, err)
			}
			if err := s.events.Append(ctx, testStream(cart, 2, "r-2")); err != nil {
				t.Errorf("append after version 1: %v (version 1 is missing)", err)
			}
			snap, err := s.snaps.Load(ctx, cart)
			switch {
			case tc.failing && !errors.Is(err, factum.ErrNotFound):
				t.Errorf("the failed write's snapshot: v%d, %v; want NotFound", snap.Version, err)
			case tc.failing:
			case err != nil:
				t.Fatalf("load snapshot: %v", err)
			case snap.Version != 1:
				t.Errorf("snapshot v%d, want v1", snap.Version)
			}
			pos, err := s.cps.Checkpoint(ctx, group)
			switch {
			case err != nil:
				t.Fatalf("checkpoint: %v", err)
			case pos != (factum.Position{}) && tc.failing:
				t.Errorf("the failed write's checkpoint was kept: %s", pos)
			case pos != at && !tc.failing:
				t.Errorf("checkpoint %s, want %s", pos, at)
			}
		})
	}
}

// While one append batch waits for the write connection, the next does not
// wait outside the DB's batcher for it: it queues there too, and both
// commit in one transaction.
func TestWriteBatchNextAppendBatchJoins(t *testing.T) {
	ctx := context.Background()
	s := newBatchStores(t)
	release, before := s.hold(t)
	appended := make(chan error, 2)
	for i := range 2 {
		go func() {
			appended <- s.events.Append(ctx, testStream(esShopCart.WithID(fmt.Sprintf("c-%d", i)), 1, fmt.Sprintf("r-%d", i)))
		}()
		waitFor(t, fmt.Sprintf("append batch %d is queued in the DB's batcher", i+1), func() bool { return s.queued() == i+1 })
	}
	release()
	for range 2 {
		if err := <-appended; err != nil {
			t.Errorf("append: %v", err)
		}
	}
	if got := s.batches() - before; got != 1 {
		t.Errorf("two append batches took %d transactions after the leader's, want 1", got)
	}
}
