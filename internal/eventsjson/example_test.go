package eventsjson_test

import (
	"fmt"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/internal/eventsjson"
)

func Example() {
	b, _ := eventsjson.Append(nil, []factum.DomainEvent{{ID: "e-1", Name: "item_added", Sequence: 1, IsLast: true, Body: []byte(`{"sku":"a"}`)}})
	fmt.Println(string(b))
	events, _ := eventsjson.Decode(b)
	fmt.Println(events[0].Name, string(events[0].Body))
	// Output:
	// [{"id":"e-1","name":"item_added","sequence":1,"isLast":true,"body":{"sku":"a"}}]
	// item_added {"sku":"a"}
}
