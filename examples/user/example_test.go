package user_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/engine"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/examples/user"
	"github.com/factum-go/factum/prepare"
)

func Example() {
	names, _ := user.Usernames(prepare.NewMemory(prepare.MemoryConfig{})) // per tenant
	users := user.New(names)
	rt, _ := engine.New(engine.Config{Store: eventstore.NewMemory()}, users)
	ctx := context.Background()
	_ = rt.Start(ctx)
	defer rt.Shutdown(ctx)

	wait := command.Wait(factum.StageProcessed)
	_, err := rt.Gateway().SendAndWait(ctx, factum.NewCommand(users.ID("u-1"), user.RegisterUser{Username: "alice", Email: "a@example.com"}), wait)
	fmt.Println(err)
	_, err = rt.Gateway().SendAndWait(ctx, factum.NewCommand(users.ID("u-2"), user.RegisterUser{Username: "alice", Email: "b@example.com"}), wait)
	var fe *factum.Error
	fmt.Println(errors.As(err, &fe), fe.Code, fe.Message)
	_, err = rt.Gateway().SendAndWait(ctx, factum.NewCommand(users.ID("u-1"), user.RenameUser{Username: "alicia"}), wait)
	held, _, _ := names.Get(ctx, "alicia") // in the default tenant
	fmt.Println(err, held.Value)
	// Another tenant has names of its own.
	_, err = rt.Gateway().SendAndWait(ctx, factum.NewCommand(users.ID("u-3").WithTenant("other"), user.RegisterUser{Username: "alicia", Email: "c@example.com"}), wait)
	fmt.Println(err)
	// Output:
	// <nil>
	// true IllegalState username "alice" is taken
	// <nil> u-1
	// <nil>
}
