package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"testing"
	"time"
)

// waitFor polls cond; the batcher has no hooks, and these tests must know
// when a writer is queued before they act.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// heldBatch is a prepare backend on a database of its own whose only
// write connection another component holds (blocker), so that its writes
// queue until the blocker ends.
type heldBatch struct {
	b       *PrepareBackend
	blocker *sql.Tx
}

func newHeldBatch(t *testing.T) *heldBatch {
	t.Helper()
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "batch.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	b, err := NewPrepareBackend(ctx, db, PrepareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	blocker, err := db.Writer().BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	return &heldBatch{b: b, blocker: blocker}
}

// queued counts the writes waiting for the batch ahead of them.
func (h *heldBatch) queued() int {
	h.b.batcher.mu.Lock()
	defer h.b.batcher.mu.Unlock()
	return len(h.b.batcher.queue)
}

// waitLeading waits until a leader has taken its batch and waits for the
// connection.
func (h *heldBatch) waitLeading(t *testing.T) {
	t.Helper()
	waitFor(t, "the leader took its batch", func() bool {
		h.b.batcher.mu.Lock()
		defer h.b.batcher.mu.Unlock()
		return h.b.batcher.leading && len(h.b.batcher.queue) == 0
	})
}

// A write cancelled while queued behind a blocked batch returns at once and
// is never written; the batch ahead of it completes with a definite outcome.
func TestPrepareBatchCancelWhileQueued(t *testing.T) {
	ctx := context.Background()
	h := newHeldBatch(t)
	b, queued := h.b, h.queued
	type result struct {
		ok  bool
		err error
	}
	leader := make(chan result, 1)
	go func() {
		ok, err := b.Prepare(context.Background(), "sku", "first", []byte(`"a"`), 1<<62)
		leader <- result{ok, err}
	}()
	h.waitLeading(t)

	cctx, cancel := context.WithCancel(context.Background())
	follower := make(chan result, 1)
	go func() {
		ok, err := b.Prepare(cctx, "sku", "second", []byte(`"b"`), 1<<62)
		follower <- result{ok, err}
	}()
	waitFor(t, "the follower is queued", func() bool { return queued() == 1 })
	cancel()
	select {
	case r := <-follower:
		if r.ok || !errors.Is(r.err, context.Canceled) {
			t.Fatalf("cancelled follower = %v, %v; want false, context.Canceled", r.ok, r.err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a cancelled follower kept waiting behind the blocked batch")
	}
	if n := queued(); n != 0 {
		t.Fatalf("%d writes still queued after the cancelled one left", n)
	}

	if err := h.blocker.Rollback(); err != nil {
		t.Fatal(err)
	}
	if r := <-leader; !r.ok || r.err != nil {
		t.Fatalf("leader = %v, %v; want true", r.ok, r.err)
	}
	if _, found, err := b.Get(ctx, "sku", "second"); found || err != nil {
		t.Fatalf("the cancelled write was written (%v, %v)", found, err)
	}
	if _, found, err := b.Get(ctx, "sku", "first"); !found || err != nil {
		t.Fatalf("the leader's write is missing (%v, %v)", found, err)
	}
	// The batcher is idle and usable again.
	if ok, err := b.Prepare(ctx, "sku", "third", []byte(`"c"`), 1<<62); !ok || err != nil {
		t.Fatalf("Prepare after the episode = %v, %v", ok, err)
	}
}

// Writes queued together are committed in one batch, each with the outcome
// it would have had alone, in arrival order.
func TestPrepareBatchOutcomesInOrder(t *testing.T) {
	ctx := context.Background()
	h := newHeldBatch(t)
	b, queued := h.b, h.queued
	const forever = 1<<63 - 1
	leader := make(chan error, 1)
	go func() {
		_, err := b.Prepare(ctx, "sku", "x", []byte(`"l"`), forever)
		leader <- err
	}()
	h.waitLeading(t)
	ops := []struct {
		name string
		fn   func() (bool, error)
		want bool
	}{
		{"prepare y=a", func() (bool, error) { return b.Prepare(ctx, "sku", "y", []byte(`"a"`), forever) }, true},
		{"prepare y=b", func() (bool, error) { return b.Prepare(ctx, "sku", "y", []byte(`"b"`), forever) }, false},
		{"reprepare y b->c", func() (bool, error) { return b.Reprepare(ctx, "sku", "y", []byte(`"b"`), []byte(`"c"`), forever) }, false},
		{"rollback y=a", func() (bool, error) { return b.RollbackValue(ctx, "sku", "y", []byte(`"a"`)) }, true},
		{"prepare y=d", func() (bool, error) { return b.Prepare(ctx, "sku", "y", []byte(`"d"`), forever) }, true},
		{"change y->z", func() (bool, error) { return b.ChangeKey(ctx, "sku", "y", []byte(`"d"`), "z", []byte(`"d"`), forever) }, true},
		{"change z->x", func() (bool, error) { return b.ChangeKey(ctx, "sku", "z", []byte(`"d"`), "x", []byte(`"d"`), forever) }, false},
	}
	results := make([]chan error, len(ops))
	for i, op := range ops {
		results[i] = make(chan error, 1)
		go func() {
			ok, err := op.fn()
			if err == nil && ok != op.want {
				err = errors.New("wrong outcome")
			}
			results[i] <- err
		}()
		waitFor(t, op.name+" is queued", func() bool { return queued() == i+1 })
	}
	if err := h.blocker.Rollback(); err != nil {
		t.Fatal(err)
	}
	if err := <-leader; err != nil {
		t.Fatal(err)
	}
	for i, op := range ops {
		if err := <-results[i]; err != nil {
			t.Errorf("%s: %v (want %v)", op.name, err, op.want)
		}
	}
	for key, want := range map[string]string{"x": `"l"`, "z": `"d"`} {
		r, found, err := b.Get(ctx, "sku", key)
		if err != nil || !found || string(r.Value) != want {
			t.Fatalf("%s = %s, %v, %v; want %s", key, r.Value, found, err, want)
		}
	}
	if _, found, _ := b.Get(ctx, "sku", "y"); found {
		t.Fatal("y still held after it was changed to z")
	}
}
