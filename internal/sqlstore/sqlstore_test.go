package sqlstore

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestPlaceholdersAndNames(t *testing.T) {
	for _, c := range []struct {
		name string
		got  string
		want string
	}{
		{"sqlite parameter", Numbered("?")(3), "?3"},
		{"postgres parameter", Numbered("$")(12), "$12"},
		{"a run of parameters", (&Dialect{Param: Numbered("$")}).params(2, 4), "$2, $3, $4"},
		{"one parameter", (&Dialect{Param: Numbered("?")}).params(1, 1), "?1"},
		{"a context's table", ContextTable("my-shop.v2", "leases"), `"factum_my-shop.v2_leases"`},
	} {
		if c.got != c.want {
			t.Errorf("%s: %q, want %q", c.name, c.got, c.want)
		}
	}
}

// Wake closes the channel every waiter holds, and the next Wait gets a new
// one, open until the next Wake.
func TestBroadcastWakesEveryWaiter(t *testing.T) {
	var b Broadcast
	first, second := b.Wait(), b.Wait()
	if first != second {
		t.Fatal("two waiters before a wake got different channels")
	}
	b.Wake()
	for _, ch := range []<-chan struct{}{first, second} {
		select {
		case <-ch:
		default:
			t.Fatal("a waiter was not woken")
		}
	}
	next := b.Wait()
	select {
	case <-next:
		t.Fatal("the next wait is woken before the next wake")
	default:
	}
	b.Wake()
	<-next
}

func TestPause(t *testing.T) {
	woken := make(chan struct{})
	close(woken)
	if err := Pause(context.Background(), time.Hour, nil, woken); err != nil {
		t.Fatalf("woken: %v", err)
	}
	if err := Pause(context.Background(), time.Millisecond, nil, nil); err != nil {
		t.Fatalf("timed out: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Pause(ctx, time.Hour, nil, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v, want context.Canceled", err)
	}
}

// Purge runs batches until one deletes fewer than PurgeBatch, and reports
// what it deleted before a failing batch with the failure.
func TestPurgeLoop(t *testing.T) {
	d := &Dialect{Name: "test"}
	counts := []int64{PurgeBatch, PurgeBatch, 7}
	n, err := Purge(context.Background(), d, "records", func(context.Context) (int64, error) {
		c := counts[0]
		counts = counts[1:]
		return c, nil
	})
	if err != nil || n != 2*PurgeBatch+7 || len(counts) != 0 {
		t.Fatalf("purged %d, %v, %d batches left; want %d, nil, 0", n, err, len(counts), 2*PurgeBatch+7)
	}
	boom := errors.New("boom")
	calls := 0
	n, err = Purge(context.Background(), d, "records", func(context.Context) (int64, error) {
		if calls++; calls == 2 {
			return 0, boom
		}
		return PurgeBatch, nil
	})
	if !errors.Is(err, boom) || n != PurgeBatch {
		t.Fatalf("failing batch: %d, %v; want %d, boom", n, err, PurgeBatch)
	}
}

// A batch's write context ends only once every caller's has.
func TestWriteContextEndsWithTheLastCaller(t *testing.T) {
	ctxA, cancelA := context.WithCancel(context.Background())
	ctxB, cancelB := context.WithCancel(context.Background())
	defer cancelB()
	batch := []*AppendRequest{{Ctx: ctxA}, {Ctx: ctxB}}
	ctx, release := WriteContext(batch)
	defer release()
	cancelA()
	select {
	case <-ctx.Done():
		t.Fatal("the write context ended with the first caller")
	case <-time.After(20 * time.Millisecond):
	}
	cancelB()
	select {
	case <-ctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the write context outlived every caller")
	}
}
