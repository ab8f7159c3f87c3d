package memo

import (
	"context"
	"errors"
	"sync"

	"github.com/factum-go/factum"
)

// Set holds the values made so far, by key. The zero Set is ready to use;
// it is safe for concurrent use. Making one key's value does not hold up
// the other keys: each key has its own entry, and callers of a key being
// made wait for it under their own context.
type Set[K comparable] struct {
	mu      sync.Mutex
	entries map[K]*entry
	order   []K // keys whose value was made, in order
	closed  bool
}

// entry is one key's value, or the make in progress.
type entry struct {
	done chan struct{} // closed when make returned
	v    any
	err  error
}

// errClosed is the error of Get after Close.
var errClosed = factum.Errorf(factum.CodeIllegalState, "storage: %w", factum.ErrClosed)

// Get returns the value of key, making it with open the first time. Two
// callers never make one key's value twice: a caller that finds it being
// made waits for it, or for ctx to end. A failed open is not remembered:
// the next Get tries again.
func Get[K comparable, V any](ctx context.Context, s *Set[K], key K, open func() (V, error)) (V, error) {
	var zero V
	for {
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			return zero, errClosed
		}
		if e, ok := s.entries[key]; ok {
			s.mu.Unlock()
			select {
			case <-e.done:
			case <-ctx.Done():
				select {
				case <-e.done: // made meanwhile: the value beats the deadline
				default:
					return zero, ctx.Err()
				}
			}
			if e.err != nil {
				continue // the maker's failure is its own: try again
			}
			return e.v.(V), nil
		}
		e := &entry{done: make(chan struct{})}
		if s.entries == nil {
			s.entries = map[K]*entry{}
		}
		s.entries[key] = e
		s.mu.Unlock()

		v, err := open()
		s.mu.Lock()
		if err != nil {
			delete(s.entries, key)
			e.err = err
		} else {
			e.v = v
			s.order = append(s.order, key)
		}
		close(e.done)
		s.mu.Unlock()
		if err != nil {
			return zero, err
		}
		return v, nil
	}
}

// Close closes every value that has a Close method, the last made first,
// after the makes in progress have returned, and makes later Gets fail
// with an IllegalState error wrapping factum.ErrClosed. A second Close
// does nothing.
func (s *Set[K]) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	var pending []*entry
	for _, e := range s.entries {
		pending = append(pending, e)
	}
	s.mu.Unlock()
	for _, e := range pending {
		<-e.done
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var errs []error
	for i := len(s.order) - 1; i >= 0; i-- {
		switch c := s.entries[s.order[i]].v.(type) {
		case interface{ Close() error }:
			errs = append(errs, c.Close())
		case interface{ Close() }:
			c.Close()
		}
	}
	s.entries, s.order = nil, nil
	return errors.Join(errs...)
}
