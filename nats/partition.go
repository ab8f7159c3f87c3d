package nats

import "hash/fnv"

// PartitionOf returns the partition of an aggregate ID among n partitions:
// FNV-1a of the ID, modulo n. It is stable across processes and releases,
// which is what lets every instance agree on an aggregate's owner. n must
// be positive.
func PartitionOf(id string, n int) int {
	h := fnv.New32a()
	_, _ = h.Write([]byte(id))
	return int(h.Sum32() % uint32(n))
}
