package user_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/aggregate/aggregatetest"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/engine"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/examples/user"
	"github.com/factum-go/factum/internal/enginetest"
	"github.com/factum-go/factum/prepare"
)

func usernames(t *testing.T) *prepare.Key[string] {
	t.Helper()
	k, err := prepare.NewKey[string]("username", prepare.NewMemory(prepare.MemoryConfig{}))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func holder(t *testing.T, k *prepare.Key[string], name string) string {
	t.Helper()
	v, ok, err := k.Get(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	if !ok {
		return ""
	}
	return v.Value
}

func TestRegisterSpec(t *testing.T) {
	names := usernames(t)
	users := user.New(names)
	// The kit's aggregate ID is the user ID the reservation holds.
	aggregatetest.For(t, users).
		When(user.RegisterUser{Username: "alice", Email: "a@example.com"}).
		Events(user.UserRegistered{Username: "alice", Email: "a@example.com"}).
		State(user.User{Username: "alice", Email: "a@example.com"})
	owner := holder(t, names, "alice")
	if owner == "" {
		t.Fatal("registration did not reserve the username")
	}
	// Another user cannot take the name; the refusal releases nothing.
	aggregatetest.ForID(t, users, users.ID("someone-else")).
		When(user.RegisterUser{Username: "alice", Email: "b@example.com"}).
		Error(factum.CodeIllegalState)
	if got := holder(t, names, "alice"); got != owner {
		t.Fatalf("after a refused registration alice is held by %q, want %q", got, owner)
	}
	aggregatetest.For(t, users).When(user.RegisterUser{Username: "x", Email: "nope"}).Error(factum.CodeIllegalArgument)
}

func TestRenameSpec(t *testing.T) {
	names := usernames(t)
	users := user.New(names)
	ctx := context.Background()
	id := users.ID("u-1")
	if ok, _ := names.Prepare(ctx, "alice", prepare.Forever("u-1")); !ok {
		t.Fatal("setup")
	}
	if ok, _ := names.Prepare(ctx, "carol", prepare.Forever("u-9")); !ok {
		t.Fatal("setup")
	}
	aggregatetest.ForID(t, users, id).
		Given(user.UserRegistered{Username: "alice", Email: "a@example.com"}).
		When(user.RenameUser{Username: "carol"}).
		Error(factum.CodeIllegalState)
	if holder(t, names, "alice") != "u-1" || holder(t, names, "carol") != "u-9" {
		t.Fatal("a refused rename changed the reservations")
	}
	aggregatetest.ForID(t, users, id).
		Given(user.UserRegistered{Username: "alice", Email: "a@example.com"}).
		When(user.RenameUser{Username: "bob"}).
		Events(user.UserRenamed{From: "alice", To: "bob"}).
		State(user.User{Username: "bob", Email: "a@example.com"})
	if holder(t, names, "alice") != "" || holder(t, names, "bob") != "u-1" {
		t.Fatalf("after the rename alice=%q bob=%q", holder(t, names, "alice"), holder(t, names, "bob"))
	}
	aggregatetest.ForID(t, users, id).
		Given(user.UserRegistered{Username: "bob", Email: "a@example.com"}).
		When(user.RenameUser{Username: "bob"}).
		Error(factum.CodeIllegalState)
}

func newRuntime(t *testing.T, names *prepare.Key[string]) *engine.Engine {
	t.Helper()
	rt := enginetest.Start(t, engine.Config{Store: eventstore.NewMemory()}, user.New(names))
	return rt
}

func TestConcurrentRegistrationsOfOneName(t *testing.T) {
	names := usernames(t)
	rt := newRuntime(t, names)
	users := factum.NamedAggregate{Context: user.Context, Aggregate: "user"}
	const n = 32
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			cmd := factum.NewCommand(users.WithID(fmt.Sprintf("u-%d", i)), user.RegisterUser{Username: "zoe", Email: "z@example.com"})
			_, errs[i] = rt.Gateway().SendAndWait(context.Background(), cmd, command.Wait(factum.StageProcessed))
		})
	}
	wg.Wait()
	ok := 0
	for _, err := range errs {
		switch {
		case err == nil:
			ok++
		case !errors.Is(err, factum.ErrIllegalState):
			t.Fatalf("unexpected error %v", err)
		}
	}
	if ok != 1 {
		t.Fatalf("%d registrations of one username succeeded, want 1", ok)
	}
}

func TestRetriedRegistrationIsRecognised(t *testing.T) {
	names := usernames(t)
	rt := newRuntime(t, names)
	users := factum.NamedAggregate{Context: user.Context, Aggregate: "user"}
	register := factum.NewCommand(users.WithID(""), user.RegisterUser{Username: "max", Email: "m@example.com"}).WithRequestID("signup-1")
	first, err := rt.Gateway().SendAndWait(context.Background(), register, command.Wait(factum.StageProcessed))
	if err != nil {
		t.Fatal(err)
	}
	again, err := rt.Gateway().SendAndWait(context.Background(), register.WithRequestID("signup-1"), command.Wait(factum.StageProcessed))
	if err != nil || !again.Duplicate || again.AggregateID != first.AggregateID {
		t.Fatalf("retry = %+v, %v", again, err)
	}
	if holder(t, names, "max") != first.AggregateID.ID {
		t.Fatalf("max is held by %q, want %q", holder(t, names, "max"), first.AggregateID.ID)
	}
}
