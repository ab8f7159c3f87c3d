package uuidv7_test

import (
	"fmt"
	"time"

	"github.com/factum-go/factum/internal/uuidv7"
)

// A processor fills a stream's ID and its events' IDs in one call, stamped
// with the time it reads anyway for the stream.
func Example() {
	g := uuidv7.NewGenerator()
	ids := make([]string, 3)
	g.FillAt(ids, time.Now())
	fmt.Println(len(ids[0]), ids[0][14], ids[0] < ids[1], ids[1] < ids[2])
	// Output: 36 55 true true
}
