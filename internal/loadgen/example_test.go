package loadgen_test

import (
	"context"
	"fmt"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/internal/loadgen"
)

func ExampleRun() {
	rep, err := loadgen.Run(context.Background(), loadgen.Config{Concurrency: 4, Total: 100},
		func(_ context.Context, i int) (loadgen.Outcome, error) {
			switch {
			case i%25 == 0:
				return loadgen.Outcome{}, factum.IllegalState("refused")
			case i%50 == 1:
				return loadgen.Outcome{Duplicate: true}, nil
			}
			return loadgen.Outcome{}, nil
		})
	if err != nil {
		panic(err)
	}
	fmt.Println(rep.Total, rep.Succeeded, rep.Duplicates, rep.FailuresByCause)
	// Output: 100 94 2 map[IllegalState:4]
}
