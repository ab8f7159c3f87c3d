package eventstore

import (
	"errors"
	"testing"

	"github.com/factum-go/factum"
)

func TestOutcomeErr(t *testing.T) {
	s := &factum.EventStream{AggregateID: factum.NamedAggregate{Context: "shop", Aggregate: "cart"}.WithID("c"), Version: 3, RequestID: "r"}
	for _, c := range []struct {
		o    Outcome
		want error // nil: no error
	}{
		{Appended, nil},
		{Failed, nil},
		{RefusedTenant, factum.ErrTenantMismatch},
		{RefusedRequest, factum.ErrDuplicateRequestID},
		{RefusedAggregate, factum.ErrDuplicateAggregateID},
		{RefusedVersion, factum.ErrEventVersionConflict},
	} {
		err := c.o.err(s)
		if c.want == nil {
			if err != nil {
				t.Errorf("outcome %d: %v, want nil", c.o, err)
			}
			continue
		}
		var fe *factum.Error
		if !errors.Is(err, c.want) || !errors.As(err, &fe) || fe.Aggregate != s.AggregateID || fe.RequestID != "r" {
			t.Errorf("outcome %d: %#v, want %v naming the stream", c.o, err, c.want)
		}
	}
}
