package sqlite

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/eventstore"
)

// storesOnOneFile returns two event stores on one database file, each
// with its own DB (its own write connection), as two processes have.
func storesOnOneFile(t *testing.T) [2]*EventStore {
	t.Helper()
	path := filepath.Join(t.TempDir(), "shared.db")
	var stores [2]*EventStore
	for i := range stores {
		db, err := Open(context.Background(), path, Options{Synchronous: "NORMAL"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		stores[i] = newTestEventStore(t, db, "shop", EventStoreOptions{})
	}
	return stores
}

// Two processes append to one file: each has its own DB (own write
// connection), and SQLite's file lock serialises them. Every append
// succeeds once, and the log read by either holds all.
func TestEventStoreTwoProcesses(t *testing.T) {
	ctx := context.Background()
	stores := storesOnOneFile(t)
	named := factum.NamedAggregate{Context: "shop", Aggregate: "cart"}
	const perProcess, versions = 50, 3
	var wg sync.WaitGroup
	errs := make(chan error, 2*perProcess)
	for p, st := range stores {
		for i := range perProcess {
			wg.Go(func() {
				id := named.WithID(fmt.Sprintf("p%d-%d", p, i))
				for v := 1; v <= versions; v++ {
					if err := st.Append(ctx, testStream(id, v, fmt.Sprintf("r%d", v))); err != nil {
						errs <- err
						return
					}
				}
			})
		}
	}
	// Both processes race for the same aggregate too: exactly one wins.
	contested := named.WithID("contested")
	codes := make([]error, 2)
	for p, st := range stores {
		wg.Go(func() { codes[p] = st.Append(ctx, testStream(contested, 1, fmt.Sprintf("create-%d", p))) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if ok := (codes[0] == nil) != (codes[1] == nil); !ok {
		t.Fatalf("contested create: %v / %v, want exactly one success", codes[0], codes[1])
	}
	for _, err := range codes {
		if err != nil && !errors.Is(err, factum.ErrDuplicateAggregateID) {
			t.Fatalf("losing create: %v, want DuplicateAggregateId", err)
		}
	}
	for _, st := range stores {
		got, err := st.ReadLog(ctx, factum.Position{}, 10_000)
		if err != nil {
			t.Fatal(err)
		}
		if want := 2*perProcess*versions + 1; len(got) != want {
			t.Fatalf("log holds %d streams, want %d", len(got), want)
		}
		last := map[string]int{}
		for i, s := range got {
			if i > 0 && !got[i-1].Position.Less(s.Position) {
				t.Fatalf("log positions %v then %v", got[i-1].Position, s.Position)
			}
			if s.Version != last[s.AggregateID.ID]+1 {
				t.Fatalf("log holds %s v%d after v%d", s.AggregateID.ID, s.Version, last[s.AggregateID.ID])
			}
			last[s.AggregateID.ID] = s.Version
		}
	}
}

// A waiter in one process is woken, by polling, by an append in another.
func TestEventStoreWaitLogSeesOtherProcess(t *testing.T) {
	path := filepath.Join(t.TempDir(), "shared.db")
	ctx := context.Background()
	open := func() *EventStore {
		db, err := Open(ctx, path, Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return newTestEventStore(t, db, "shop", EventStoreOptions{PollInterval: 10 * time.Millisecond})
	}
	reader, writer := open(), open()
	woke := make(chan error, 1)
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	go func() { woke <- reader.WaitLog(wctx, factum.Position{}) }()
	s := testStream(factum.NamedAggregate{Context: "shop", Aggregate: "cart"}.WithID("c"), 1, "r")
	if err := writer.Append(ctx, s); err != nil {
		t.Fatal(err)
	}
	if err := <-woke; err != nil {
		t.Fatalf("wait: %v", err)
	}
	got, err := reader.ReadLog(ctx, factum.Position{}, 10)
	if err != nil || len(got) != 1 || got[0].ID != s.ID {
		t.Fatalf("log after waking: %+v, %v", got, err)
	}
}

// An append waiting for the write lock, held by another process, returns
// at once when its context is cancelled, and is not written once the lock
// is free.
func TestEventStoreCancelWhileWaitingForTheLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "shared.db")
	ctx := context.Background()
	db, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	st := newTestEventStore(t, db, "shop", EventStoreOptions{})
	other, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Close() })
	lock, err := other.Writer().BeginTx(ctx, nil) // BEGIN IMMEDIATE: the write lock
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Rollback()

	cctx, cancel := context.WithCancel(ctx)
	s := testStream(esShopCart.WithID("c"), 1, "r")
	done := make(chan error, 1)
	go func() { done <- st.Append(cctx, s) }()
	time.Sleep(50 * time.Millisecond) // let the append reach the lock
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled append: %v, want context.Canceled", err)
		}
	case <-time.After(time.Second):
		t.Fatal("a cancelled append waiting for the write lock did not return")
	}
	if err := lock.Rollback(); err != nil {
		t.Fatal(err)
	}
	// The store writes again once the lock is free; the cancelled append
	// is not among what it wrote.
	next := testStream(esShopCart.WithID("next"), 1, "r")
	if err := st.Append(ctx, next); err != nil {
		t.Fatal(err)
	}
	if got, _ := st.Load(ctx, s.AggregateID, 1, eventstore.MaxVersion); len(got) != 0 {
		t.Fatalf("the cancelled append stored %d streams", len(got))
	}
	if err := st.Append(ctx, s); err != nil {
		t.Fatalf("append after the cancel: %v", err)
	}
}

// A read of the log sees what another process committed after this
// store's own latest appends, also when those appends alone would fill a
// short page.
func TestReadLogSeesAnotherProcessAfterOwnAppends(t *testing.T) {
	ctx := context.Background()
	stores := storesOnOneFile(t)
	named := factum.NamedAggregate{Context: "shop", Aggregate: "cart"}
	for v := 1; v <= 3; v++ {
		if err := stores[0].Append(ctx, testStream(named.WithID("mine"), v, fmt.Sprintf("r%d", v))); err != nil {
			t.Fatal(err)
		}
	}
	if err := stores[1].Append(ctx, testStream(named.WithID("theirs"), 1, "r1")); err != nil {
		t.Fatal(err)
	}
	got, err := stores[0].ReadLog(ctx, factum.Position{}, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 4 {
		t.Fatalf("the log read holds %d streams, want 4: the other process's append is missing", len(got))
	}
	// The same read again, after another append there: the front end's
	// tail holds the first read's short page, which must not answer it.
	if err := stores[1].Append(ctx, testStream(named.WithID("theirs"), 2, "r2")); err != nil {
		t.Fatal(err)
	}
	if got, err = stores[0].ReadLog(ctx, factum.Position{}, 10); err != nil {
		t.Fatal(err)
	}
	if len(got) != 5 {
		t.Fatalf("the second log read holds %d streams, want 5: the other process's second append is missing", len(got))
	}
}
