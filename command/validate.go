package command

import (
	"errors"
	"strings"

	"github.com/factum-go/factum"
)

// Validator is implemented by command bodies that check themselves. The
// gateway calls Validate before sending; an error refuses the command with
// CommandValidation. Return ValidationErrors (or a *factum.Error with
// Bindings) to name the invalid fields.
type Validator interface {
	Validate() error
}

// ValidationErrors lists invalid fields of a command body; it is the error
// a Validate method returns to report them one by one.
type ValidationErrors []factum.BindingError

// Error joins the field messages.
func (v ValidationErrors) Error() string {
	parts := make([]string, len(v))
	for i, b := range v {
		parts[i] = b.Field + ": " + b.Message
	}
	return "invalid command: " + strings.Join(parts, "; ")
}

// validateBody runs the body's Validate, if any, and turns its error into a
// CommandValidation error carrying the binding errors.
func validateBody(body any) error {
	v, ok := body.(Validator)
	if !ok {
		return nil
	}
	err := v.Validate()
	if err == nil {
		return nil
	}
	e := factum.NewError(factum.CodeCommandValidation, err.Error())
	e.Err = err
	var ve ValidationErrors
	var fe *factum.Error
	switch {
	case errors.As(err, &ve):
		e.Bindings = []factum.BindingError(ve)
	case errors.As(err, &fe):
		e.Bindings = fe.Bindings
		e.Message = fe.Message
	}
	return e
}
