package lincheck_test

import (
	"fmt"

	"github.com/anishathalye/porcupine"
)

// A register that two clients write and read: the history below is
// linearizable (the read may take effect after either write), which is what
// Check asks porcupine inside a test.
func Example() {
	model := porcupine.Model{
		Init: func() any { return 0 },
		Step: func(state, input, output any) (bool, any) {
			in := input.([2]int) // {0, v}: write v; {1, 0}: read
			if in[0] == 0 {
				return true, in[1]
			}
			return output.(int) == state.(int), state
		},
	}
	history := []porcupine.Operation{
		{ClientId: 0, Input: [2]int{0, 1}, Call: 0, Output: 0, Return: 10},
		{ClientId: 1, Input: [2]int{0, 2}, Call: 5, Output: 0, Return: 15},
		{ClientId: 2, Input: [2]int{1, 0}, Call: 12, Output: 1, Return: 20},
	}
	fmt.Println(porcupine.CheckOperations(model, history))
	// Output: true
}
