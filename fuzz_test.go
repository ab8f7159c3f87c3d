package factum_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/eventstore"
)

// FuzzValidateIdentity: identity validation never panics; what it accepts
// survives JSON and is accepted again; and a stream built on an accepted
// identity appends to the memory store.
func FuzzValidateIdentity(f *testing.F) {
	for _, s := range [][4]string{
		{"shop", "cart", "cart-1", "default"},
		{"shop", "cart", "", ""},
		{"Shop", "cart", "a/b", "t"},
		{"shop", "cart", "\x00", "tenant"},
		{"s", "c", "é", "ü"},
		{"shop", "cart", "cart 1", "de fault"},
	} {
		f.Add(s[0], s[1], s[2], s[3])
	}
	f.Fuzz(func(t *testing.T, ctxName, aggName, id, tenant string) {
		a := factum.AggregateID{NamedAggregate: factum.NamedAggregate{Context: ctxName, Aggregate: aggName}, ID: id, Tenant: tenant}
		_ = factum.ValidateName("name", ctxName)
		_ = factum.ValidateID("id", id)
		err := a.Validate()
		if err == nil {
			b, merr := json.Marshal(a)
			if merr != nil {
				t.Fatalf("marshal %#v: %v", a, merr)
			}
			var back factum.AggregateID
			if uerr := json.Unmarshal(b, &back); uerr != nil || back.Validate() != nil || back.String() != a.String() {
				t.Fatalf("accepted %#v does not survive JSON: %s -> %#v (%v)", a, b, back, uerr)
			}
			s := &factum.EventStream{ID: factum.NewID(), AggregateID: a, Version: 1, CommandID: factum.NewID(), RequestID: factum.DeriveID(id, tenant),
				Events: []factum.DomainEvent{{ID: factum.NewID(), Name: "created", Sequence: 1, IsLast: true, Body: []byte(`{}`)}}}
			if err := eventstore.NewMemory().Append(context.Background(), s); err != nil {
				t.Fatalf("valid identity %#v: append: %v", a, err)
			}
			return
		}
		var fe *factum.Error
		if !errors.As(err, &fe) || fe.Code != factum.CodeIllegalArgument {
			t.Fatalf("Validate(%#v) = %v, want an IllegalArgument *factum.Error", a, err)
		}
	})
}

// FuzzEventStreamValidate: any JSON decoded into an event stream either
// fails Validate with IllegalArgument, or is appended by the memory store
// and read back unchanged in its events.
func FuzzEventStreamValidate(f *testing.F) {
	f.Add([]byte(`{"id":"s-1","aggregateId":{"context":"shop","aggregate":"cart","id":"c-1"},"version":1,"commandId":"c","requestId":"r","events":[{"id":"e-1","name":"item_added","sequence":1,"isLast":true,"body":{"sku":"a"}}]}`))
	f.Add([]byte(`{"id":"s-1","aggregateId":{"context":"shop","aggregate":"cart","id":"c-1"},"version":0,"commandId":"c","requestId":"r","events":[]}`))
	f.Add([]byte(`{"id":"s-1","aggregateId":{"context":"shop","aggregate":"cart","id":"c-1"},"version":1,"commandId":"c","requestId":"r","events":[{"id":"e-1","name":"a","sequence":1},{"id":"e-2","name":"b","sequence":2,"isLast":true,"revision":-1,"body":"x"}]}`))
	f.Add([]byte(`{"events":[{"body":"\ud800"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var s factum.EventStream
		if json.Unmarshal(data, &s) != nil {
			return
		}
		err := s.Validate()
		if err != nil {
			var fe *factum.Error
			if !errors.As(err, &fe) || fe.Code != factum.CodeIllegalArgument {
				t.Fatalf("Validate = %v, want an IllegalArgument *factum.Error", err)
			}
			return
		}
		st := eventstore.NewMemory()
		if s.Version != 1 {
			return // a first append must be version 1; Validate does not know the store
		}
		if err := st.Append(context.Background(), &s); err != nil {
			t.Fatalf("a valid stream is refused: %v", err)
		}
		got, err := st.Load(context.Background(), s.AggregateID, 1, eventstore.MaxVersion)
		if err != nil || len(got) != 1 || len(got[0].Events) != len(s.Events) {
			t.Fatalf("load back: %v %v", got, err)
		}
	})
}
