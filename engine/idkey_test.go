package engine_test

import (
	"context"
	"errors"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/engine"
	"github.com/factum-go/factum/eventstore"
)

// With Config.IDKey, a create without an ID gets the keyed ID, not the
// unkeyed one anyone can compute, and its retry on another instance with
// the same key (another engine over the same store) finds the first
// attempt under that ID.
func TestCreateWithoutIDKeyed(t *testing.T) {
	key := []byte("an-engine-ID-key-of-thirty-two-bytes-or-more-01234")
	store := eventstore.NewMemory()
	first, def := newRuntime(t, engine.Config{Store: store, IDKey: key}, nil)
	second, _ := newRuntime(t, engine.Config{Store: store, IDKey: key}, nil)
	ctx := context.Background()
	cmd := func() factum.Command {
		return factum.NewCommand(def.ID("").WithTenant("acme"), Open{}).WithRequestID("open-1")
	}
	r, err := first.Gateway().SendAndWait(ctx, cmd(), processed())
	if err != nil {
		t.Fatal(err)
	}
	named := factum.NamedAggregate{Context: "test", Aggregate: "counter"}
	if r.AggregateID.ID != first.Gateway().CreateID(named, "acme", "open-1") || r.AggregateID.ID == command.CreateID(named, "acme", "open-1") {
		t.Fatalf("created %s, want the keyed ID %s", r.AggregateID.ID, first.Gateway().CreateID(named, "acme", "open-1"))
	}
	again, err := second.Gateway().SendAndWait(ctx, cmd(), processed())
	if err != nil {
		t.Fatal(err)
	}
	if again.AggregateID != r.AggregateID || !again.Duplicate || again.AggregateVersion != 1 {
		t.Fatalf("retry on another instance: %+v, want the first attempt's outcome under %s", again, r.AggregateID)
	}
}

// A key shorter than command.MinIDKeyLen stops engine.New.
func TestShortIDKeyRefused(t *testing.T) {
	_, err := engine.New(engine.Config{Store: eventstore.NewMemory(), IDKey: []byte("short")}, counterType(nil))
	if !errors.Is(err, command.ErrIDKeyTooShort) || factum.CodeOf(err) != factum.CodeIllegalArgument {
		t.Fatalf("engine.New with a 5-byte ID key: %v, want IllegalArgument and command.ErrIDKeyTooShort", err)
	}
}
