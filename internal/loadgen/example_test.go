package loadgen_test

import (
	"context"
	"fmt"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/internal/loadgen"
)

func ExampleRun() {
	rep, err := loadgen.Run(context.Background(), loadgen.Config{Concurrency: 4, Total: 100},
		func(_ context.Context, i int) error {
			if i%25 == 0 {
				return factum.IllegalState("refused")
			}
			return nil
		})
	if err != nil {
		panic(err)
	}
	fmt.Println(rep.Total, rep.Succeeded, rep.ErrorsByCode)
	// Output: 100 96 map[IllegalState:4]
}
