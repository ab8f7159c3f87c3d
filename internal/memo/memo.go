package memo

import (
	"errors"
	"sync"

	"github.com/factum-go/factum"
)

// Set holds the values made so far, by key. The zero Set is ready to use;
// it is safe for concurrent use.
type Set[K comparable] struct {
	mu     sync.Mutex
	values map[K]any
	order  []K
	closed bool
}

// Get returns the value of key, making it with make the first time. A
// failed make is not remembered: the next Get tries again. make runs under
// the set's lock, so that two callers never make the same value twice.
func Get[K comparable, V any](s *Set[K], key K, make func() (V, error)) (V, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var zero V
	if s.closed {
		return zero, factum.Errorf(factum.CodeIllegalState, "storage: %w", factum.ErrClosed)
	}
	if v, ok := s.values[key]; ok {
		return v.(V), nil
	}
	v, err := make()
	if err != nil {
		return zero, err
	}
	if s.values == nil {
		s.values = map[K]any{}
	}
	s.values[key] = v
	s.order = append(s.order, key)
	return v, nil
}

// Close closes every value that has a Close method, the last made first,
// and makes later Gets fail with an IllegalState error wrapping
// factum.ErrClosed. A second Close does nothing.
func (s *Set[K]) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	var errs []error
	for i := len(s.order) - 1; i >= 0; i-- {
		switch c := s.values[s.order[i]].(type) {
		case interface{ Close() error }:
			errs = append(errs, c.Close())
		case interface{ Close() }:
			c.Close()
		}
	}
	s.values, s.order = nil, nil
	return errors.Join(errs...)
}
