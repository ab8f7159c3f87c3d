package aggregatetest_test

import (
	"fmt"

	"github.com/factum-go/factum/aggregate/aggregatetest"
)

func ExampleDiff() {
	fmt.Print(aggregatetest.Diff(tally{N: 1}, tally{N: 2}))
	// Output:
	//   aggregatetest_test.tally
	//   {
	// -   "N": 1
	// +   "N": 2
	//   }
}
