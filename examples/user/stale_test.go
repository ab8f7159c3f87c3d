package user_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/engine"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/examples/user"
	"github.com/factum-go/factum/internal/enginetest"
	"github.com/factum-go/factum/prepare"
)

// Two instances share one event store and one reservation backend. A's
// cache is stale when it renames: its first attempt conflicts and the
// handler runs again on the reloaded state. Events, reservations and state
// must agree afterwards: the rename's first attempt must not leave its
// reservation behind.
func TestRenameWithAStaleCacheStaysConsistent(t *testing.T) {
	ctx := context.Background()
	store := eventstore.NewMemory()
	names := usernames(t)
	start := func() *engine.Engine {
		rt := enginetest.Start(t, engine.Config{Store: store}, user.New(names))
		return rt
	}
	a, b := start(), start()
	users := factum.NamedAggregate{Context: user.Context, Aggregate: "user"}
	id := users.WithID("u-1")
	send := func(rt *engine.Engine, body any) error {
		_, err := rt.Gateway().SendAndWait(ctx, factum.NewCommand(id, body), command.Wait(factum.StageProcessed))
		return err
	}
	if err := send(a, user.RegisterUser{Username: "alice", Email: "a@example.com"}); err != nil {
		t.Fatal(err)
	}
	// B renames twice; A's cache still says alice at version 1.
	for _, to := range []string{"bob", "alice"} {
		if err := send(b, user.RenameUser{Username: to}); err != nil {
			t.Fatal(err)
		}
	}
	if err := send(a, user.RenameUser{Username: "dave"}); err != nil {
		t.Fatalf("rename on the stale instance: %v", err)
	}

	streams, err := store.Load(ctx, id, 1, 100)
	if err != nil {
		t.Fatal(err)
	}
	current := ""
	for _, s := range streams {
		for _, e := range s.Events {
			var body struct{ Username, To string }
			if err := json.Unmarshal(e.Body, &body); err != nil {
				t.Fatal(err)
			}
			current = body.Username + body.To
		}
	}
	if current != "dave" {
		t.Fatalf("the events say %q, want dave", current)
	}
	for _, name := range []string{"alice", "bob", "dave"} {
		want := ""
		if name == current {
			want = "u-1"
		}
		if got := holder(t, names, name); got != want {
			t.Errorf("%s is held by %q, want %q (events say %q)", name, got, want, current)
		}
	}
}

// A registration whose first attempt reserved the name and then died before
// its append (a crash): the retry finds the name held by its own user ID
// and registers, instead of calling the name taken.
func TestRetryAfterACrashFindsItsOwnReservation(t *testing.T) {
	ctx := context.Background()
	names := usernames(t)
	rt := newRuntime(t, names)
	users := factum.NamedAggregate{Context: user.Context, Aggregate: "user"}
	id := command.CreateID(users, factum.DefaultTenant, "signup-9")
	if ok, err := names.Prepare(ctx, "nina", prepare.Forever(id)); !ok || err != nil {
		t.Fatal("setup", err)
	}
	res, err := rt.Gateway().SendAndWait(ctx, factum.NewCommand(users.WithID(""), user.RegisterUser{Username: "nina", Email: "n@example.com"}).WithRequestID("signup-9"), command.Wait(factum.StageProcessed))
	if err != nil || res.AggregateID.ID != id {
		t.Fatalf("retried registration = %+v, %v", res, err)
	}
	if got := holder(t, names, "nina"); got != id {
		t.Fatalf("nina is held by %q, want %q", got, id)
	}
}
