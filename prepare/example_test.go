package prepare_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/prepare"
)

// UserRef is what a username is reserved for: the user owning it.
type UserRef struct {
	UserID string `json:"userId"`
}

// Registered is the event a registration produces.
type Registered struct{ UserID, Username string }

// register is a command handler's decision: reserve the username for good,
// and refuse the command with a business error when someone holds it.
func register(ctx context.Context, usernames *prepare.Key[UserRef], userID, username string) ([]any, error) {
	return prepare.UsingPrepare(ctx, usernames, username, prepare.Forever(UserRef{userID}),
		func(ctx context.Context, prepared bool) ([]any, error) {
			if !prepared {
				return nil, factum.IllegalState(fmt.Sprintf("username %q is already taken", username))
			}
			return []any{Registered{userID, username}}, nil
		})
}

// A username reserved through UsingPrepare, refused to a second user, and
// renamed with a key change.
func Example() {
	ctx := context.Background()
	usernames, err := prepare.NewKey[UserRef]("username", prepare.NewMemory(prepare.MemoryConfig{}))
	if err != nil {
		panic(err)
	}

	events, err := register(ctx, usernames, "u-1", "alice")
	fmt.Println(events, err)

	_, err = register(ctx, usernames, "u-2", "alice")
	fmt.Println(errors.Is(err, factum.ErrIllegalState), err)

	// Rename: alice -> alicia, in one atomic step on every factum backend.
	renamed, err := usernames.ChangeKey(ctx, "alice", UserRef{"u-1"}, "alicia", prepare.Forever(UserRef{"u-1"}))
	fmt.Println("renamed:", renamed, err)

	owner, held, _ := usernames.Get(ctx, "alicia")
	fmt.Println("alicia held by", owner.Value.UserID, held)

	// The old name is free again, so the second user can have it now.
	events, err = register(ctx, usernames, "u-2", "alice")
	fmt.Println(events, err)

	// Renaming onto a taken name reports false and changes nothing.
	renamed, err = usernames.ChangeKey(ctx, "alicia", UserRef{"u-1"}, "alice", prepare.Forever(UserRef{"u-1"}))
	fmt.Println("renamed:", renamed, err)

	// Output:
	// [{u-1 alice}] <nil>
	// true factum: IllegalState: username "alice" is already taken
	// renamed: true <nil>
	// alicia held by u-1 true
	// [{u-2 alice}] <nil>
	// renamed: false <nil>
}
