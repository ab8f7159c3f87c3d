package memo

import (
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
				c, err := Get(&s, k, func() (*closer, error) { made.Add(1); return &closer{k, &log}, nil })
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
	if _, err := Get(&s, "a", func() (*closer, error) { return nil, nil }); !errors.Is(err, factum.ErrClosed) {
		t.Fatalf("Get after Close: %v, want ErrClosed", err)
	}
}

func TestAFailedMakeIsTriedAgain(t *testing.T) {
	var s Set[int]
	boom := errors.New("boom")
	if _, err := Get(&s, 1, func() (int, error) { return 0, boom }); !errors.Is(err, boom) {
		t.Fatalf("got %v", err)
	}
	v, err := Get(&s, 1, func() (int, error) { return 7, nil })
	if err != nil || v != 7 {
		t.Fatalf("got %d, %v", v, err)
	}
}
