package crashtest_test

import (
	"fmt"

	"github.com/factum-go/factum/internal/crashtest"
)

// The ledger is what the audit compares the service's data with: what was
// acknowledged, at which version, and what is still of unknown outcome
// (to be settled by resending with the same request ID).
func ExampleLedger() {
	led := crashtest.NewLedger()
	add := crashtest.Request{Aggregate: "cart", ID: "cart-1", Command: "add_item", RequestID: "r-1", Body: []byte(`{"sku":"sku-1","qty":1}`)}
	led.Acked(add, 1)
	inFlight := add
	inFlight.RequestID = "r-2"
	led.Unknown(inFlight) // the server died before answering
	acked, unknown, rejected := led.Counts()
	fmt.Println(acked, unknown, rejected, led.Touched())
	led.Acked(inFlight, 2) // the resend: appended now, or a duplicate of the first attempt
	acked, unknown, _ = led.Counts()
	fmt.Println(acked, unknown)
	// Output:
	// 1 1 0 [{cart cart-1}]
	// 2 0
}
