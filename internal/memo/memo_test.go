package memo

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/factum-go/factum"
)

type closer struct {
	name string
	log  *[]string
}

func (c *closer) Close() error { *c.log = append(*c.log, c.name); return nil }

func TestGetMakesOncePerKeyAndCloseReverses(t *testing.T) {
	var s Set[string]
	var made atomic.Int32
	var log []string
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for _, k := range []string{"a", "b"} {
				c, err := Get(context.Background(), &s, k, func() (*closer, error) { made.Add(1); return &closer{k, &log}, nil })
				if err != nil || c.name != k {
					t.Errorf("Get(%s) = %v, %v", k, c, err)
				}
			}
		})
	}
	wg.Wait()
	if made.Load() != 2 {
		t.Fatalf("made %d values, want 2", made.Load())
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if len(log) != 2 || log[0] == log[1] {
		t.Fatalf("closed %v, want both once", log)
	}
	if _, err := Get(context.Background(), &s, "a", func() (*closer, error) { return nil, nil }); !errors.Is(err, factum.ErrClosed) {
		t.Fatalf("Get after Close: %v, want ErrClosed", err)
	}
}

func TestAFailedMakeIsTriedAgain(t *testing.T) {
	var s Set[int]
	boom := errors.New("boom")
	if _, err := Get(context.Background(), &s, 1, func() (int, error) { return 0, boom }); !errors.Is(err, boom) {
		t.Fatalf("got %v", err)
	}
	v, err := Get(context.Background(), &s, 1, func() (int, error) { return 7, nil })
	if err != nil || v != 7 {
		t.Fatalf("got %d, %v", v, err)
	}
}

// A slow open of one key holds up neither the other keys nor a waiter
// whose context ends.
func TestASlowOpenHoldsUpOnlyItsOwnKey(t *testing.T) {
	var s Set[string]
	if _, err := Get(context.Background(), &s, "b", func() (int, error) { return 2, nil }); err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	started := make(chan struct{})
	go func() {
		_, _ = Get(context.Background(), &s, "a", func() (int, error) { close(started); <-release; return 1, nil })
	}()
	<-started
	if v, err := Get(context.Background(), &s, "b", func() (int, error) { return 0, errors.New("made again") }); err != nil || v != 2 {
		t.Fatalf("Get(b) during a's open = %v, %v", v, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Get(ctx, &s, "a", func() (int, error) { return 0, errors.New("made twice") }); !errors.Is(err, context.Canceled) {
		t.Fatalf("a waiter with an ended context: %v, want context.Canceled", err)
	}
	close(release)
	if v, err := Get(context.Background(), &s, "a", func() (int, error) { return 0, errors.New("made twice") }); err != nil || v != 1 {
		t.Fatalf("Get(a) after its open = %v, %v", v, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

// The zero handle answers an error, never a nil dereference.
func TestAZeroHandleRefuses(t *testing.T) {
	var s *Stores
	if _, err := s.EventStore(context.Background(), "shop"); factum.CodeOf(err) != factum.CodeIllegalState {
		t.Fatalf("EventStore of a nil handle: %v, want IllegalState", err)
	}
	if _, err := s.IdempotencyStore(context.Background()); factum.CodeOf(err) != factum.CodeIllegalState {
		t.Fatalf("IdempotencyStore of a nil handle: %v, want IllegalState", err)
	}
	if err := Close(s); err != nil {
		t.Fatal(err)
	}
}
