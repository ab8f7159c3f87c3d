package aggregate_test

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/aggregate"
	"github.com/factum-go/factum/codec"
	"github.com/factum-go/factum/eventstore"
)

// preparer is the optional interface of the executors NewExecutor
// returns that a transport calls (nats.Preparer).
type preparer interface{ Prepare(*factum.Command) }

// fussy panics when it decodes "panic", as a hand-written UnmarshalJSON
// may.
type fussy struct{ S string }

func (f *fussy) UnmarshalJSON(b []byte) error {
	if string(b) == `"panic"` {
		panic("fussy")
	}
	f.S = string(b)
	return nil
}

var fussies = aggregate.New[acct]("bank", "fussy",
	aggregate.Source(func(a *acct, e deposited) { a.Balance += e.Amount }),
	aggregate.Handle(func(_ context.Context, _ acct, f fussy) ([]any, error) {
		return []any{deposited{Amount: len(f.S)}}, nil
	}, aggregate.AllowCreate()),
)

// newPrepareExecutors returns the executor of a Definition and of a
// Registry, over stores of their own.
func newPrepareExecutors(t *testing.T) map[string]aggregate.Executor {
	t.Helper()
	out := map[string]aggregate.Executor{}
	def, err := accounts.NewExecutor(aggregate.ExecutorConfig{Store: eventstore.NewMemory(), Codec: codec.NewRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	out["definition"] = def
	reg, err := aggregate.NewRegistry(accounts, fussies)
	if err != nil {
		t.Fatal(err)
	}
	routed, err := reg.NewExecutor(aggregate.ExecutorConfig{Store: eventstore.NewMemory(), Codec: codec.NewRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	out["registry"] = routed
	return out
}

// Prepare decodes a JSON body into the handler's command type; any other
// body (a value, a pointer, JSON that does not decode), and a command the
// executor does not handle (another name, another aggregate type), stay as
// they are. Processed afterwards, the command gets the signal it gets
// unprepared: the same code and message.
func TestPrepareDecodesBodiesItsHandlersTake(t *testing.T) {
	other := factum.NamedAggregate{Context: "bank", Aggregate: "other"}
	cases := []struct {
		name  string
		named factum.NamedAggregate
		cmd   string
		body  any
		want  any // the body after Prepare; nil: unchanged
		fussy bool
		code  factum.Code // the signal's; empty: the executor's own (routed or not)
	}{
		{name: "JSON", named: accounts.Named(), cmd: "deposit", body: json.RawMessage(`{"Amount":7}`), want: deposit{Amount: 7}, code: factum.CodeOk},
		{name: "bytes", named: accounts.Named(), cmd: "deposit", body: []byte(`{"Amount":7}`), want: deposit{Amount: 7}, code: factum.CodeOk},
		{name: "value", named: accounts.Named(), cmd: "deposit", body: deposit{Amount: 7}, code: factum.CodeOk},
		{name: "pointer", named: accounts.Named(), cmd: "deposit", body: &deposit{Amount: 7}, code: factum.CodeOk},
		{name: "string", named: accounts.Named(), cmd: "deposit", body: "7", code: factum.CodeIllegalArgument},
		{name: "not JSON", named: accounts.Named(), cmd: "deposit", body: json.RawMessage(`{"Amount":`), code: factum.CodeBadRequest},
		{name: "wrong JSON type", named: accounts.Named(), cmd: "deposit", body: json.RawMessage(`{"Amount":"x"}`), code: factum.CodeBadRequest},
		{name: "unknown command", named: accounts.Named(), cmd: "withdraw", body: json.RawMessage(`{"Amount":7}`), code: factum.CodeIllegalArgument},
		{name: "unknown aggregate type", named: other, cmd: "deposit", body: json.RawMessage(`{"Amount":7}`)},
		{name: "decoding panics", named: fussies.Named(), cmd: "fussy", body: json.RawMessage(`"panic"`), fussy: true, code: factum.CodeInternalServerError},
		{name: "custom decoding", named: fussies.Named(), cmd: "fussy", body: json.RawMessage(`"ok"`), want: fussy{S: `"ok"`}, fussy: true, code: factum.CodeOk},
	}
	for exName, exec := range newPrepareExecutors(t) {
		t.Run(exName, func(t *testing.T) {
			p, ok := exec.(preparer)
			if !ok {
				t.Fatalf("%T does not implement Prepare", exec)
			}
			for i, tc := range cases {
				t.Run(tc.name, func(t *testing.T) {
					if tc.fussy && exName == "definition" {
						t.Skip("the definition's executor holds accounts alone")
					}
					mk := func(suffix string) *factum.Command {
						c := factum.NewCommand(tc.named.WithID("p"+string(rune('a'+i))+suffix), tc.body)
						c.Name, c.AllowCreate = tc.cmd, true
						return &c
					}
					cmd := mk("-prepared")
					p.Prepare(cmd)
					want := tc.want
					if want == nil {
						want = tc.body
					}
					if !reflect.DeepEqual(cmd.Body, want) || reflect.TypeOf(cmd.Body) != reflect.TypeOf(want) {
						t.Fatalf("body after Prepare = %#v (%T), want %#v (%T)", cmd.Body, cmd.Body, want, want)
					}
					got := exec.Process(context.Background(), cmd)
					plain := exec.Process(context.Background(), mk("-plain"))
					if tc.code != "" && got.Code != tc.code {
						t.Errorf("code %s (%q), want %s", got.Code, got.Message, tc.code)
					}
					// A panic's message holds its stack: its first line says what.
					if got.Code != plain.Code || firstLine(got.Message) != firstLine(plain.Message) {
						t.Errorf("prepared: %s %q; unprepared: %s %q", got.Code, got.Message, plain.Code, plain.Message)
					}
				})
			}
		})
	}
}

// firstLine returns s up to its first line break.
func firstLine(s string) string {
	first, _, _ := strings.Cut(s, "\n")
	return first
}
