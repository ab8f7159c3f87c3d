package postgres

import "slices"

// batchSize returns the largest batch size with a statement up to n.
func (s *EventStore) batchSize(n int) int {
	sizes := s.q.sizes
	i, found := slices.BinarySearch(sizes, n)
	if found {
		return n
	}
	return sizes[i-1]
}
