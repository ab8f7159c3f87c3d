package sqlite_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/sqlite"
)

func ExampleNewCheckpointStore() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "factum-example")
	defer os.RemoveAll(dir)
	db, err := sqlite.Open(ctx, filepath.Join(dir, "shop.db"), sqlite.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer db.Close()
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
