package eventstore_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/eventstore"
)

func memStream(id factum.AggregateID, version int) *factum.EventStream {
	return &factum.EventStream{
		ID: factum.NewID(), AggregateID: id, Version: version,
		CommandID: factum.NewID(), RequestID: fmt.Sprintf("r%d", version), CreateTime: time.Now(),
		Events: []factum.DomainEvent{{ID: factum.NewID(), Name: "added", Sequence: 1, IsLast: true, Body: []byte(`{}`)}},
	}
}

// Readers tailing the log while many goroutines append must see positions
// 1, 2, 3 ... with no gap and each aggregate's versions in order: a reader
// never sees position n+1 before n.
func TestMemoryLogNoGapUnderConcurrentAppends(t *testing.T) {
	st := eventstore.NewMemory()
	named := factum.NamedAggregate{Context: "mem", Aggregate: "log"}
	const writers, aggregatesPerWriter, versions = 8, 50, 20
	total := writers * aggregatesPerWriter * versions
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	var readers sync.WaitGroup
	for r := range 3 {
		readers.Go(func() {
			var pos factum.Position
			last := map[string]int{}
			for n := 0; n < total; {
				batch, err := st.ReadLog(ctx, pos, 7+r)
				if err != nil {
					t.Errorf("reader %d: %v", r, err)
					return
				}
				if len(batch) == 0 {
					if err := st.WaitLog(ctx, pos); err != nil {
						t.Errorf("reader %d: wait: %v", r, err)
						return
					}
					continue
				}
				for _, s := range batch {
					if s.Position.Seq != pos.Seq+1 {
						t.Errorf("reader %d: position %d after %d", r, s.Position.Seq, pos.Seq)
						return
					}
					if s.Version != last[s.AggregateID.ID]+1 {
						t.Errorf("reader %d: %s version %d after %d", r, s.AggregateID.ID, s.Version, last[s.AggregateID.ID])
						return
					}
					last[s.AggregateID.ID] = s.Version
					pos = s.Position
					n++
				}
			}
		})
	}
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for v := 1; v <= versions; v++ {
				for a := range aggregatesPerWriter {
					id := named.WithID(fmt.Sprintf("w%d-a%d", w, a))
					if err := st.Append(ctx, memStream(id, v)); err != nil {
						t.Errorf("append: %v", err)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	readers.Wait()
}

// The memory store keeps the appended stream itself, header and all (the
// Store contract hands it over), with its tenant and position set.
func TestMemoryKeepsTheAppendedStream(t *testing.T) {
	st := eventstore.NewMemory()
	id := factum.NamedAggregate{Context: "mem", Aggregate: "hdr"}.WithID("h-1")
	s := memStream(id, 1)
	s.Header = map[string]string{"trace": "a"}
	if err := st.Append(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	got, err := st.Load(context.Background(), id, 1, 1)
	if err != nil || len(got) != 1 {
		t.Fatalf("load: %v %v", got, err)
	}
	if got[0].Header["trace"] != "a" {
		t.Fatalf("stored header %v", got[0].Header)
	}
	if got[0].AggregateID.Tenant != factum.DefaultTenant || got[0].Position.Seq != 1 || s.Position != got[0].Position {
		t.Fatalf("stored %+v, appended position %v", got[0], s.Position)
	}
}

// A refused append leaves the caller's stream as it was.
func TestMemoryRefusedAppendLeavesStream(t *testing.T) {
	st := eventstore.NewMemory()
	id := factum.NamedAggregate{Context: "mem", Aggregate: "ref"}.WithID("r-1")
	if err := st.Append(context.Background(), memStream(id, 1)); err != nil {
		t.Fatal(err)
	}
	s := memStream(id, 3) // a gap
	s.AggregateID.Tenant = ""
	s.Header = map[string]string{"k": "v"}
	hdr := s.Header
	if err := st.Append(context.Background(), s); factum.CodeOf(err) != factum.CodeEventVersionConflict {
		t.Fatalf("append with a gap = %v", err)
	}
	if !s.Position.IsZero() || s.AggregateID.Tenant != "" || fmt.Sprint(s.Header) != fmt.Sprint(hdr) {
		t.Fatalf("refused append changed the stream: %+v", s)
	}
}

// A read returns the streams after its position in order, whatever the
// page's size and wherever it starts and ends among the log's chunks.
func TestMemoryReadLogAcrossChunks(t *testing.T) {
	ctx := context.Background()
	st := eventstore.NewMemory()
	named := factum.NamedAggregate{Context: "mem", Aggregate: "chunks"}
	const total = 9000 // more than two chunks of 4,096
	for i := range total {
		if err := st.Append(ctx, memStream(named.WithID(fmt.Sprint("a", i)), 1)); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		name         string
		after, limit int
		want         int
	}{
		{"all at once", 0, total + 10, total},
		{"within a chunk", 10, 20, 20},
		{"to a chunk's end", 4000, 96, 96},
		{"across one boundary", 4090, 20, 20},
		{"across two boundaries", 4000, 4300, 4300},
		{"the log's tail", total - 5, 100, 5},
		{"at the end", total, 10, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			page, err := st.ReadLog(ctx, factum.Position{Seq: uint64(c.after)}, c.limit)
			if err != nil {
				t.Fatal(err)
			}
			if len(page) != c.want {
				t.Fatalf("%d streams, want %d", len(page), c.want)
			}
			for i, s := range page {
				if want := uint64(c.after + i + 1); s.Position.Seq != want || s.AggregateID.ID != fmt.Sprint("a", want-1) {
					t.Fatalf("stream %d at position %d of %s, want %d of a%d", i, s.Position.Seq, s.AggregateID.ID, want, want-1)
				}
			}
		})
	}
}
