package sqlite_test

import (
	"context"
	"fmt"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/sqlite"
)

func ExampleNewCheckpointStore() {
	ctx := context.Background()
	db, done := openExample(ctx)
	defer done()
	checkpoints, err := sqlite.NewCheckpointStore(ctx, db, "shop")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer checkpoints.Close()
	group := factum.Function{Context: "shop", Processor: "cart_summary_projector"}
	for _, seq := range []uint64{12, 40, 25} { // 25 arrives late: it is ignored
		if err := checkpoints.SaveCheckpoint(ctx, group, factum.Position{Seq: seq}); err != nil {
			fmt.Println(err)
			return
		}
	}
	pos, err := checkpoints.Checkpoint(ctx, group)
	fmt.Println(pos, err)
	// Output: 0:40 <nil>
}
