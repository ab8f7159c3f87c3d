package storebench_test

import (
	"fmt"

	"github.com/factum-go/factum/internal/storebench"
)

// The benchmarks save orders shaped like this one.
func ExampleOrder() {
	s := storebench.Order(3, 1)
	fmt.Println(s.AggregateID, s.Version, string(s.State))
	// Output: shop.order/order-000003@t1 1 {"status":"cancelled","total":757,"customer":"bob","lines":[{"sku":"sku-3","qty":4}],"address":{"city":"Paris","zip":"75001"}}
}
