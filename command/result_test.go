package command_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/command"
)

// TestResultWireFormat locks the JSON of a command result, the body of the
// HTTP API's command responses and SSE events: field names, order and
// omissions. A Result is the signal that reached the wait, so the signal's
// JSON is the same bytes.
func TestResultWireFormat(t *testing.T) {
	full := command.Result{
		Stage: factum.StageProcessed, CommandID: "c-1", RequestID: "r-1",
		AggregateID:      factum.AggregateID{NamedAggregate: factum.NamedAggregate{Context: "shop", Aggregate: "cart"}, ID: "a-1", Tenant: "acme"},
		AggregateVersion: 3, Function: factum.Function{Context: "shop", Processor: "summary", Name: "on_added"},
		EventNames: []string{"item_added"}, Code: factum.CodeCommandValidation, Message: "bad",
		Bindings: []factum.BindingError{{Field: "qty", Message: "must be positive"}},
		Results:  map[string]any{"k": 1}, Duplicate: true, Note: "n", SignalTime: time.Unix(5, 0).UTC(),
	}
	tests := []struct {
		name string
		r    command.Result
		want string
	}{
		{"full", full, `{"stage":"PROCESSED","commandId":"c-1","requestId":"r-1",` +
			`"aggregateId":{"context":"shop","aggregate":"cart","id":"a-1","tenant":"acme"},"aggregateVersion":3,` +
			`"function":{"context":"shop","processor":"summary","name":"on_added"},"eventNames":["item_added"],` +
			`"errorCode":"CommandValidation","errorMsg":"bad","bindingErrors":[{"field":"qty","message":"must be positive"}],` +
			`"result":{"k":1},"duplicate":true,"note":"n","signalTime":"1970-01-01T00:00:05Z"}`},
		{"sent", command.Result{Stage: factum.StageSent, Code: factum.CodeOk}, `{"stage":"SENT","commandId":"","requestId":"",` +
			`"aggregateId":{"context":"","aggregate":"","id":"","tenant":""},"errorCode":"Ok","signalTime":"0001-01-01T00:00:00Z"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := json.Marshal(tt.r)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Fatalf("result JSON\n got %s\nwant %s", got, tt.want)
			}
			sig, err := json.Marshal(factum.Signal(tt.r))
			if err != nil || string(sig) != tt.want {
				t.Fatalf("signal JSON %s (%v), want the result's", sig, err)
			}
		})
	}
}
