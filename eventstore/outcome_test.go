package eventstore_test

import (
	"errors"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/eventstore"
)

func TestOutcomeErr(t *testing.T) {
	s := &factum.EventStream{AggregateID: factum.NamedAggregate{Context: "shop", Aggregate: "cart"}.WithID("c"), Version: 3, RequestID: "r"}
	for _, c := range []struct {
		o    eventstore.Outcome
		want error // nil: no error
	}{
		{eventstore.Appended, nil},
		{eventstore.Failed, nil},
		{eventstore.RefusedTenant, factum.ErrTenantMismatch},
		{eventstore.RefusedRequest, factum.ErrDuplicateRequestID},
		{eventstore.RefusedAggregate, factum.ErrDuplicateAggregateID},
		{eventstore.RefusedVersion, factum.ErrEventVersionConflict},
	} {
		err := c.o.Err(s)
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
