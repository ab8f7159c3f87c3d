package notify_test

import (
	"context"
	"fmt"

	"github.com/factum-go/factum/examples/notify"
)

// A greylisting domain defers the first deliveries; a later one is sent.
func Example() {
	relay, _ := notify.NewRelay(notify.RelayConfig{Deferrals: 1})
	m := notify.Mail{ID: "ev-1", To: "ann@greylist.example", Subject: "Welcome, ann"}
	fmt.Println(relay.Send(context.Background(), m))
	fmt.Println(relay.Send(context.Background(), m))
	fmt.Println(relay.Send(context.Background(), notify.Mail{ID: "ev-2", To: "bob@mail.invalid"}))
	fmt.Println(len(relay.Sent()))
	// Output:
	// factum: TooManyRequests: 451 4.7.1 ann@greylist.example: greylisted, try again later (deferral 1 of 1)
	// <nil>
	// factum: IllegalArgument: 550 5.1.2 bob@mail.invalid: domain does not accept mail
	// 1
}
