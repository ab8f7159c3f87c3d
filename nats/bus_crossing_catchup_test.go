package nats

import (
	"context"
	"testing"

	"github.com/factum-go/factum"
)

// A claim catching up waits for the sends that crossed to the partition's
// former owner (partState.crossing). The consumer looks at the catch-up
// only when it delivers (caughtUp): when the last crossing send ends
// after the consumer's last delivery, the catch-up must still end, else
// the partition's local admission waits for some later command of it to
// be published and delivered. Two ways it ends so: the crossing command
// is delivered before its sender reads JetStream's acknowledgement (both
// come from the server at once), or its publish fails (sequence 0).
func TestCatchUpEndsWhenTheLastCrossingSendEndsAfterTheLastDelivery(t *testing.T) {
	for _, tc := range []struct {
		name      string
		delivered uint64 // what the consumer delivered before the send ended
		seq       uint64 // where the crossing send was stored (0: it failed)
	}{
		{name: "delivered before its acknowledgement", delivered: 5, seq: 5},
		{name: "failed", delivered: 0, seq: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := &Bus{state: make([]partState, 1)}
			st := &b.state[0]
			cmd := &factum.Command{ID: "c1"}
			// No claim here: the send crosses to the owner.
			if token, fwd, err := b.forward(context.Background(), cmd, 0); token != 0 || fwd || err != nil {
				t.Fatalf("forward without a claim: token %d, fwd %v, err %v", token, fwd, err)
			}
			// This instance takes the partition while the send is under way
			// (as acquire does).
			const token = 7
			st.mu.Lock()
			st.token, st.catchingUp, st.fwdSeq, st.delivered = token, true, 0, tc.delivered
			st.mirror()
			st.mu.Unlock()
			// The consumer's last look: nothing pending, the crossing send
			// not ended yet.
			b.caughtUp(0, token, 0)
			if _, catchingUp := st.claimed(); !catchingUp {
				t.Fatal("caught up while a send crossed")
			}
			b.crossed(0, tc.seq)
			// Nothing else comes for the partition: nothing delivers again.
			if _, catchingUp := st.claimed(); catchingUp {
				t.Errorf("still catching up after the last crossing send ended (stored at %d, delivered %d, nothing pending): local admission waits for a later command", tc.seq, tc.delivered)
			}
		})
	}
}
