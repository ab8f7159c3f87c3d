package user

import (
	"context"
	"fmt"
	"strings"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/aggregate"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/prepare"
)

// Context is the bounded context of the example.
const Context = "shop"

// User is the user aggregate's state.
type User struct {
	Username string `json:"username"`
	Email    string `json:"email"`
}

// The commands.
type (
	// RegisterUser creates a user with a unique username.
	RegisterUser struct {
		Username string `json:"username"`
		Email    string `json:"email"`
	}
	// RenameUser moves the user to another free username.
	RenameUser struct {
		Username string `json:"username"`
	}
)

// The events.
type (
	// UserRegistered records RegisterUser.
	UserRegistered struct {
		Username string `json:"username"`
		Email    string `json:"email"`
	}
	// UserRenamed records RenameUser.
	UserRenamed struct {
		From string `json:"from"`
		To   string `json:"to"`
	}
)

// taken is the business error for a username another user holds. Errors
// reach callers as a code and a message (they travel as wait signals), so
// it is an IllegalState error with a message that names the username.
func taken(name string) error {
	return factum.IllegalState(fmt.Sprintf("username %q is taken", name))
}

// Validate checks a username: 3 to 32 lower-case letters, digits, '_' or
// '-'.
func validUsername(field, name string) *factum.BindingError {
	if len(name) < 3 || len(name) > 32 {
		return &factum.BindingError{Field: field, Message: "must be 3 to 32 characters"}
	}
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return &factum.BindingError{Field: field, Message: "may hold only a-z, 0-9, '_' and '-'"}
		}
	}
	return nil
}

// Validate checks RegisterUser before it is sent.
func (c RegisterUser) Validate() error {
	var errs command.ValidationErrors
	if b := validUsername("username", c.Username); b != nil {
		errs = append(errs, *b)
	}
	if !strings.Contains(c.Email, "@") {
		errs = append(errs, factum.BindingError{Field: "email", Message: "is not an e-mail address"})
	}
	if len(errs) > 0 {
		return errs
	}
	return nil
}

// Validate checks RenameUser before it is sent.
func (c RenameUser) Validate() error {
	if b := validUsername("username", c.Username); b != nil {
		return command.ValidationErrors{*b}
	}
	return nil
}

// New defines the user aggregate ("shop", "user") over the username
// reservations.
func New(usernames *prepare.Key[string]) *aggregate.Definition[User] {
	return aggregate.New[User](Context, "user",
		aggregate.Source(func(u *User, e UserRegistered) { u.Username, u.Email = e.Username, e.Email }),
		aggregate.Source(func(u *User, e UserRenamed) { u.Username = e.To }),

		aggregate.Handle(func(ctx context.Context, _ User, c RegisterUser) ([]any, error) {
			if err := c.Validate(); err != nil {
				return nil, factum.IllegalArgument(err.Error())
			}
			// The reservation is bound to the append, not made here: the
			// processor makes it before appending UserRegistered and
			// releases it if the append fails.
			id := aggregate.CommandFrom(ctx).AggregateID.ID
			if err := aggregate.Bind(ctx, usernames.Reserve(c.Username, prepare.Forever(id)).IfTaken(taken(c.Username))); err != nil {
				return nil, err
			}
			return []any{UserRegistered(c)}, nil
		}, aggregate.Create()),

		aggregate.Handle(func(ctx context.Context, u User, c RenameUser) ([]any, error) {
			if err := c.Validate(); err != nil {
				return nil, factum.IllegalArgument(err.Error())
			}
			if c.Username == u.Username {
				return nil, factum.IllegalState(fmt.Sprintf("the user is already %q", u.Username))
			}
			id := prepare.Forever(aggregate.CommandFrom(ctx).AggregateID.ID)
			if err := aggregate.Bind(ctx, usernames.Change(u.Username, id, c.Username, id).IfTaken(taken(c.Username))); err != nil {
				return nil, err
			}
			return []any{UserRenamed{From: u.Username, To: c.Username}}, nil
		}),
	)
}
