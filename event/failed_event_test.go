package event

import (
	"fmt"
	"testing"

	"github.com/factum-go/factum"
)

// A failure is charged to the event of the stream the function's error
// names, however wrapped, and to the first event the function consumes
// when the error names none, or names an event the stream does not hold:
// recorded against it, the failure would be retried as another event's,
// or refused.
func TestFailedEventIsAnEventOfTheStream(t *testing.T) {
	s := &factum.EventStream{Events: []factum.DomainEvent{
		{ID: "e1", Name: "skipped"}, {ID: "e2", Name: "added"}, {ID: "e3", Name: "added"},
	}}
	h := &Handler{Events: []string{"added"}}
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"named", &EventError{EventID: "e3", Err: factum.IllegalState("x")}, "e3"},
		{"wrapped", fmt.Errorf("outer: %w", &EventError{EventID: "e3", Err: factum.IllegalState("x")}), "e3"},
		{"unnamed", factum.IllegalState("x"), "e2"},
		{"empty", &EventError{Err: factum.IllegalState("x")}, "e2"},
		{"foreign", &EventError{EventID: "another-streams-event", Err: factum.IllegalState("x")}, "e2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := failedEventID(h, s, tc.err); got != tc.want {
				t.Errorf("failedEventID = %q, want %q", got, tc.want)
			}
		})
	}
}
