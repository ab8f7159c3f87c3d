package engine_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/engine"
	"github.com/factum-go/factum/eventstore"
)

// A command sent without a request ID gets its command ID as request ID,
// in the result and in the stream stored.
func TestRequestIDDefaultsToCommandID(t *testing.T) {
	store := eventstore.NewMemory()
	rt, def := newRuntime(t, engine.Config{Store: store}, nil)
	cmd := factum.NewCommand(def.ID("c-1"), Add{N: 1})
	cmd.RequestID = ""
	res, err := rt.Gateway().SendAndWait(context.Background(), cmd, processed())
	if err != nil {
		t.Fatal(err)
	}
	if res.RequestID == "" || res.RequestID != res.CommandID {
		t.Fatalf("request ID %q, command ID %q", res.RequestID, res.CommandID)
	}
	s, err := store.Lookup(context.Background(), def.ID("c-1").WithTenant(factum.DefaultTenant), res.CommandID)
	if err != nil || s.RequestID != res.CommandID || s.CommandID != res.CommandID {
		t.Fatalf("stored %+v, %v", s, err)
	}
}

// A caller's timeout above the configured maximum is refused before the
// command is sent.
func TestCallerTimeoutIsCapped(t *testing.T) {
	store := eventstore.NewMemory()
	rt, def := newRuntime(t, engine.Config{Store: store, MaxTimeout: time.Minute}, nil)
	id := def.ID("c-1")
	_, err := rt.Gateway().SendAndWait(context.Background(), factum.NewCommand(id, Add{N: 1}), processed().Within(2*time.Minute))
	mustCode(t, err, factum.CodeIllegalArgument)
	if _, err := rt.Gateway().SendAndWait(context.Background(), factum.NewCommand(id, Add{N: 1}), processed().Within(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if s, _ := store.Load(context.Background(), id.WithTenant(factum.DefaultTenant), 1, eventstore.MaxVersion); len(s) != 1 {
		t.Fatalf("%d streams, want only the second command's", len(s))
	}
}

// lostLookups is a store whose request lookups fail, as when the database
// is unreachable, and which counts appends.
type lostLookups struct {
	eventstore.Store
	appends atomic.Int64
}

func (s *lostLookups) Lookup(context.Context, factum.AggregateID, string) (factum.EventStream, error) {
	return factum.EventStream{}, errors.New("injected: connection refused")
}

func (s *lostLookups) Append(ctx context.Context, st *factum.EventStream) error {
	s.appends.Add(1)
	return s.Store.Append(ctx, st)
}

// A request the pre-check may have seen, when the store that would settle
// it cannot be reached, is refused with a retryable error; it is not let
// through unchecked.
func TestPrecheckWithoutItsAuthorityRefusesRetryably(t *testing.T) {
	store := &lostLookups{Store: eventstore.NewMemory()}
	rt, def := newRuntime(t, engine.Config{Store: store}, nil)
	id := def.ID("c-1")
	if _, err := rt.Gateway().SendAndWait(context.Background(), factum.NewCommand(id, Add{N: 1}).WithRequestID("r-1"), processed()); err != nil {
		t.Fatal(err)
	}
	res, err := rt.Gateway().SendAndWait(context.Background(), factum.NewCommand(id, Add{N: 1}).WithRequestID("r-1"), processed())
	if err == nil || !factum.IsRetryable(err) || res.Stage != factum.StageSent {
		t.Fatalf("retry = %+v, %v; want a retryable refusal at SENT", res, err)
	}
	var rerr *command.ResultError
	if !errors.As(err, &rerr) || rerr.Result.Code != factum.CodeTooManyRequests {
		t.Fatalf("err = %v", err)
	}
	if n := store.appends.Load(); n != 1 {
		t.Fatalf("%d appends: the repeated request reached the processor", n)
	}
	if _, err := command.NewRequestChecker(nil, command.CheckerConfig{}); factum.CodeOf(err) != factum.CodeIllegalArgument {
		t.Fatalf("a checker without a store: %v", err)
	}
}
