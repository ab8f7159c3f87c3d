package command_test

import (
	"errors"
	"fmt"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/command"
)

// A failed result is also an error that matches its code.
func ExampleResultError() {
	r := command.Result{Stage: factum.StageProcessed, CommandID: "c1", Code: factum.CodeIllegalState, Message: "cart is empty"}
	err := r.Err()
	var re *command.ResultError
	fmt.Println(errors.Is(err, factum.ErrIllegalState), errors.As(err, &re), re.Result.Stage)
	fmt.Println(err)
	// Output:
	// true true PROCESSED
	// command c1 at PROCESSED: IllegalState: cart is empty
}

func ExampleWait() {
	plan := command.Wait(factum.StageProjected).For(factum.Function{Processor: "cart_summary"})
	fmt.Println(plan.Stage, plan.Function.Processor, plan.Timeout)
	// Output: PROJECTED cart_summary 0s
}
