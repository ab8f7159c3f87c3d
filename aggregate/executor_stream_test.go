package aggregate_test

import (
	"context"
	"maps"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/aggregate"
	"github.com/factum-go/factum/codec"
	"github.com/factum-go/factum/eventstore"
)

type tally struct{ N int }
type bump struct{ Times int }
type bumped struct{ I int }

var tallies = aggregate.New[tally]("bank", "tally",
	aggregate.Source(func(s *tally, _ bumped) { s.N++ }),
	aggregate.Handle(func(_ context.Context, _ tally, b bump) ([]any, error) {
		events := make([]any, b.Times)
		for i := range events {
			events[i] = bumped{I: i}
		}
		return events, nil
	}, aggregate.AllowCreate()),
)

// The stream and its events get distinct UUIDv7 IDs, increasing in event
// order and stamped with the stream's create time, which is also the
// PROCESSED signal's time. Streams with more events than the processor's
// inline ID buffer take the other path.
func TestStreamIdentities(t *testing.T) {
	store := eventstore.NewMemory()
	p, err := tallies.NewExecutor(aggregate.ExecutorConfig{Store: store, Codec: codec.NewRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	id := tallies.ID("t-1")
	seen := map[string]bool{}
	for v, times := range []int{1, 3, 7, 8, 20} {
		c := factum.NewCommand(id, bump{Times: times})
		c.AggregateID.Tenant = factum.DefaultTenant
		c.AllowCreate = true // the gateway sets the marker from the definition
		sig := p.Process(context.Background(), &c)
		if !sig.Succeeded() || sig.AggregateVersion != v+1 || len(sig.EventNames) != times {
			t.Fatalf("command %d: %+v", v, sig)
		}
		s, err := store.Lookup(context.Background(), id, c.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !sig.SignalTime.Equal(s.CreateTime) {
			t.Fatalf("signal time %v, stream create time %v", sig.SignalTime, s.CreateTime)
		}
		ids := []string{s.ID}
		for _, e := range s.Events {
			ids = append(ids, e.ID)
		}
		for i, x := range ids {
			u, err := uuid.Parse(x)
			if err != nil || u.Version() != 7 {
				t.Fatalf("ID %q is not a UUIDv7 (%v)", x, err)
			}
			if seen[x] {
				t.Fatalf("ID %s used twice", x)
			}
			seen[x] = true
			if i > 0 && x <= ids[i-1] {
				t.Fatalf("event ID %s does not follow %s", x, ids[i-1])
			}
			var ms int64
			for _, b := range u[:6] {
				ms = ms<<8 | int64(b)
			}
			if ms < s.CreateTime.UnixMilli() {
				t.Fatalf("ID %s carries %d ms, before the stream's create time %d", x, ms, s.CreateTime.UnixMilli())
			}
		}
	}
}

// headerWriter writes one entry into each stream's header.
type headerWriter struct{}

func (headerWriter) ObserveCache(bool)                                                 {}
func (headerWriter) StartPhase(ctx context.Context, _ aggregate.Phase) context.Context { return ctx }
func (headerWriter) EndPhase(context.Context, aggregate.Phase, error)                  {}
func (headerWriter) StreamHeader(_ context.Context, h map[string]string) map[string]string {
	out := maps.Clone(h)
	if out == nil {
		out = map[string]string{}
	}
	out["written"] = "yes"
	return out
}

// A stream's header is its own copy of the command's, so the sender's map
// stays the sender's to change (the in-memory store keeps the header it
// is handed), and a HeaderWriter writes into that copy, never into the
// command's.
func TestStreamHeaderIsTheStreamsOwn(t *testing.T) {
	for _, tt := range []struct {
		name   string
		ctx    context.Context
		header map[string]string
		want   map[string]string
	}{
		{"no header", context.Background(), nil, nil},
		{"copied", context.Background(), map[string]string{"k": "v"}, map[string]string{"k": "v"}},
		{"written", aggregate.WithCacheObserver(context.Background(), headerWriter{}), map[string]string{"k": "v"}, map[string]string{"k": "v", "written": "yes"}},
		{"written without a header", aggregate.WithCacheObserver(context.Background(), headerWriter{}), nil, map[string]string{"written": "yes"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			store := eventstore.NewMemory()
			p, err := tallies.NewExecutor(aggregate.ExecutorConfig{Store: store, Codec: codec.NewRegistry()})
			if err != nil {
				t.Fatal(err)
			}
			c := factum.NewCommand(tallies.ID("t-1"), bump{Times: 1})
			c.AggregateID.Tenant = factum.DefaultTenant
			c.AllowCreate = true
			c.Header = tt.header
			if sig := p.Process(tt.ctx, &c); !sig.Succeeded() {
				t.Fatalf("process: %+v", sig)
			}
			if tt.header != nil {
				if len(tt.header) != 1 || tt.header["k"] != "v" {
					t.Fatalf("the command's header changed: %v", tt.header)
				}
				tt.header["k"] = "changed"
			}
			s, err := store.Lookup(context.Background(), c.AggregateID, c.ID)
			if err != nil {
				t.Fatal(err)
			}
			if !maps.Equal(s.Header, tt.want) || (tt.want == nil) != (s.Header == nil) {
				t.Fatalf("stored header %v, want %v", s.Header, tt.want)
			}
		})
	}
}

// stamped is an event that notes when it is encoded.
type stamped struct {
	encoded *time.Time
}

func (s stamped) MarshalJSON() ([]byte, error) {
	*s.encoded = time.Now()
	return []byte("{}"), nil
}

// createTimes notes the create time of each stream appended to it.
type createTimes struct {
	eventstore.Store
	at []time.Time
}

func (c *createTimes) Append(ctx context.Context, st *factum.EventStream) error {
	c.at = append(c.at, st.CreateTime)
	return c.Store.Append(ctx, st)
}

// A stream's create time is read once its events are encoded: the last
// step before the append, so a store decorator timing the append may take
// it for the append's start.
func TestTheCreateTimeFollowsTheEncoding(t *testing.T) {
	var encoded time.Time
	def := aggregate.New[acct]("bank", "stamps",
		aggregate.Source(func(*acct, stamped) {}),
		aggregate.Handle(func(context.Context, acct, deposit) ([]any, error) {
			return []any{stamped{encoded: &encoded}}, nil
		}, aggregate.AllowCreate()),
	)
	store := &createTimes{Store: eventstore.NewMemory()}
	p, err := def.NewExecutor(aggregate.ExecutorConfig{Store: store, Codec: codec.NewRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	if sig := send(p, def.ID("s-1"), deposit{Amount: 1}); !sig.Succeeded() {
		t.Fatalf("%+v", sig)
	}
	if len(store.at) != 1 || encoded.IsZero() || store.at[0].Before(encoded) {
		t.Fatalf("created at %v, encoded at %v: created before encoded", store.at, encoded)
	}
}
