package codec_test

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/codec"
)

type ItemAdded struct {
	SKU string `json:"sku"`
	Qty int    `json:"qty"`
}

func Example() {
	r := codec.NewRegistry()
	// Revision 1 renamed "count" to "qty"; old bodies are upcast on decode.
	codec.MustRegister[ItemAdded](r, codec.Revision(1))
	_ = r.AddUpcaster("item_added", 0, func(b json.RawMessage) (json.RawMessage, error) {
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			return nil, err
		}
		m["qty"] = m["count"]
		delete(m, "count")
		return json.Marshal(m)
	})

	name, rev, body, _ := r.Encode(ItemAdded{SKU: "sku-1", Qty: 2})
	fmt.Println(name, rev, string(body))

	v, _ := r.Decode("item_added", 0, []byte(`{"sku":"sku-1","count":5}`))
	fmt.Printf("%+v\n", v)

	_, err := r.Decode("item_removed", 0, []byte(`{}`))
	fmt.Println(err, errors.Is(err, factum.ErrNotFound))
	// Output:
	// item_added 1 {"sku":"sku-1","qty":2}
	// {SKU:sku-1 Qty:5}
	// codec: unknown message type "item_removed" true
}
