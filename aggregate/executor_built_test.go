package aggregate_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/aggregate"
	"github.com/factum-go/factum/codec"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/internal/built"
)

// counting is an event store that counts its appends of each kind.
type counting interface {
	eventstore.Store
	counts() (plain, built int)
}

// builtCounter is the memory store, which appends built streams.
type builtCounter struct {
	*eventstore.Memory
	plain, built int
}

func (s *builtCounter) Append(ctx context.Context, st *factum.EventStream) error {
	s.plain++
	return s.Memory.Append(ctx, st)
}

func (s *builtCounter) AppendBuilt(ctx context.Context, b built.Stream) error {
	s.built++
	return s.Memory.AppendBuilt(ctx, b)
}

// BuiltOwner says the AppendBuilt above is the counter's own.
func (s *builtCounter) BuiltOwner() built.Owner { return built.OwnedBy(s) }

func (s *builtCounter) counts() (int, int) { return s.plain, s.built }

// plainCounter is a store without AppendBuilt, as a wrapper from outside
// the module is.
type plainCounter struct {
	eventstore.Store
	plain int
}

func (s *plainCounter) Append(ctx context.Context, st *factum.EventStream) error {
	s.plain++
	return s.Store.Append(ctx, st)
}

func (s *plainCounter) counts() (int, int) { return s.plain, 0 }

// The executor hands the streams it builds to a store's AppendBuilt, which
// skips the checks they cannot fail, and to Append on any other store.
func TestExecutorAppendsBuiltStreams(t *testing.T) {
	tests := []struct {
		name      string
		store     counting
		wantPlain int
		wantBuilt int
	}{
		{"front end", &builtCounter{Memory: eventstore.NewMemory()}, 0, 2},
		{"other store", &plainCounter{Store: eventstore.NewMemory()}, 2, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := tallies.NewExecutor(aggregate.ExecutorConfig{Store: tt.store, Codec: codec.NewRegistry()})
			if err != nil {
				t.Fatal(err)
			}
			id := tallies.ID("t-1")
			for v, times := range []int{1, 3} {
				if sig := send(p, id, bump{Times: times}); !sig.Succeeded() || sig.AggregateVersion != v+1 {
					t.Fatalf("command %d: %+v", v, sig)
				}
			}
			streams, err := tt.store.Load(context.Background(), id.WithTenant(factum.DefaultTenant), 1, eventstore.MaxVersion)
			if err != nil || len(streams) != 2 || len(streams[1].Events) != 3 {
				t.Fatalf("stored %d streams (%v)", len(streams), err)
			}
			if plain, built := tt.store.counts(); plain != tt.wantPlain || built != tt.wantBuilt {
				t.Fatalf("appends: %d plain, %d built; want %d, %d", plain, built, tt.wantPlain, tt.wantBuilt)
			}
		})
	}
}

type rawNote struct{ Text json.RawMessage }
type rawNoted struct{ Text json.RawMessage }

// rawNotes emits its command's text as the event's, encoded by json.Marshal,
// which copies a RawMessage (as it does a Marshaler's output) without
// checking its UTF-8.
var rawNotes = aggregate.New[tally]("bank", "note",
	aggregate.Source(func(s *tally, _ rawNoted) { s.N++ }),
	aggregate.Handle(func(_ context.Context, _ tally, n rawNote) ([]any, error) {
		return []any{rawNoted(n)}, nil
	}, aggregate.AllowCreate()),
)

// A built stream whose body is not valid UTF-8 is refused as Append
// refuses it: the executor's encoding does not vouch for UTF-8.
func TestExecutorRefusesInvalidUTF8Bodies(t *testing.T) {
	store := &builtCounter{Memory: eventstore.NewMemory()}
	p, err := rawNotes.NewExecutor(aggregate.ExecutorConfig{Store: store, Codec: codec.NewRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	id := rawNotes.ID("n-1")
	if sig := send(p, id, rawNote{Text: json.RawMessage("\"\xff\"")}); sig.Succeeded() {
		t.Fatalf("a body of invalid UTF-8 was appended: %+v", sig)
	}
	streams, err := store.Load(context.Background(), id.WithTenant(factum.DefaultTenant), 1, eventstore.MaxVersion)
	if err != nil || len(streams) != 0 {
		t.Fatalf("stored %d streams (%v)", len(streams), err)
	}
	if _, built := store.counts(); built != 1 {
		t.Fatalf("%d built appends, want 1: the test missed the built path", built)
	}
}

// refusing is a user's store wrapper: it embeds the memory store, as a
// wrapper overriding only Append does, and refuses every append.
type refusing struct {
	*eventstore.Memory
	appends int
}

func (s *refusing) Append(context.Context, *factum.EventStream) error {
	s.appends++
	return factum.IllegalArgument("refusing: no appends")
}

// A store that embeds one of the module's stores and overrides Append has
// its Append called: AppendBuilt, promoted into it by the embedding, is
// the embedded store's and would skip the wrapper.
func TestExecutorCallsAWrappersAppend(t *testing.T) {
	store := &refusing{Memory: eventstore.NewMemory()}
	p, err := tallies.NewExecutor(aggregate.ExecutorConfig{Store: store, Codec: codec.NewRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	if sig := send(p, tallies.ID("t-1"), bump{Times: 1}); sig.Succeeded() {
		t.Fatalf("the wrapper's Append was skipped: %+v", sig)
	}
	if store.appends != 1 {
		t.Fatalf("the wrapper's Append ran %d times, want 1", store.appends)
	}
}
