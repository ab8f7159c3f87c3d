package snapshot_test

import (
	"context"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/internal/storebench"
	"github.com/factum-go/factum/snapshot"
)

// BenchmarkQueryServiceList10k: a list query over 10,000 snapshots in the
// memory store, AND of EQ, GT and CONTAINS (about 1,600 match), sorted by
// a number descending, first 20, returned as typed snapshots.
func BenchmarkQueryServiceList10k(b *testing.B) {
	storebench.List10k(b, storebench.FillList10k(b, snapshot.NewMemory()))
}

// BenchmarkMemorySave saves new versions of 10,000 aggregates in turn.
func BenchmarkMemorySave(b *testing.B) {
	ctx := context.Background()
	store := snapshot.NewMemory()
	snaps := make([]snapshot.Snapshot, 10_000)
	for i := range snaps {
		snaps[i] = storebench.Order(i, 1)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		s := snaps[i%len(snaps)]
		s.Version = 1 + i/len(snaps)
		if _, err := store.Save(ctx, s); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchmarkMemoryLoad loads snapshots of 10,000 aggregates in turn.
func BenchmarkMemoryLoad(b *testing.B) {
	ctx := context.Background()
	store := snapshot.NewMemory()
	ids := make([]factum.AggregateID, 10_000)
	for i := range ids {
		s := storebench.Order(i, 1)
		ids[i] = s.AggregateID
		if _, err := store.Save(ctx, s); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if _, err := store.Load(ctx, ids[i%len(ids)]); err != nil {
			b.Fatal(err)
		}
		i++
	}
}
