package quickstart_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/aggregate"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/engine"
	"github.com/factum-go/factum/sqlite"
)

// The state, a command and an event are plain Go types.
type Account struct{ Balance int }
type Deposit struct{ Amount int }
type Deposited struct{ Amount int }

// Accounts is the aggregate: how events change the state, and how
// commands are decided.
var Accounts = aggregate.New[Account]("bank", "account",
	aggregate.Source(func(a *Account, e Deposited) { a.Balance += e.Amount }),
	aggregate.Handle(func(ctx context.Context, a Account, c Deposit) ([]any, error) {
		if c.Amount <= 0 {
			return nil, factum.IllegalArgument("amount must be positive")
		}
		return []any{Deposited(c)}, nil
	}, aggregate.AllowCreate()),
)

func Example() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "quickstart")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	db, err := sqlite.Open(ctx, filepath.Join(dir, "bank.db"))
	if err != nil {
		panic(err)
	}
	defer db.Close()
	rt, err := engine.New(engine.Config{Storage: db}, Accounts)
	if err != nil {
		panic(err)
	}
	_ = rt.Start(ctx)
	defer rt.Shutdown(ctx)

	// Send a command and wait until the snapshot (the query store) has it.
	deposit := factum.NewCommand(Accounts.ID("acc-1"), Deposit{Amount: 50}).WithRequestID("deposit-1")
	res, err := rt.Gateway().SendAndWait(ctx, deposit, command.Wait(factum.StageSnapshot))
	fmt.Println(res.AggregateVersion, err)

	// Retrying the same request is safe: the first outcome comes back.
	again, _ := rt.Gateway().SendAndWait(ctx, deposit.WithRequestID("deposit-1"), command.Wait(factum.StageProcessed))
	fmt.Println(again.AggregateVersion, again.Duplicate)

	// A rejected command carries a stable code.
	_, err = rt.Gateway().SendAndWait(ctx, factum.NewCommand(Accounts.ID("acc-1"), Deposit{Amount: -5}), command.Wait(factum.StageProcessed))
	fmt.Println(factum.CodeOf(err))

	snap, _ := rt.Snapshots().Load(ctx, Accounts.ID("acc-1"))
	fmt.Println(string(snap.State))
	// Output:
	// 1 <nil>
	// 1 true
	// IllegalArgument
	// {"Balance":50}
}
