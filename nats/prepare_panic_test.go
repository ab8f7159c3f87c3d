package nats

import (
	"encoding/json"
	"log/slog"
	"reflect"
	"testing"

	"github.com/factum-go/factum"
)

// panickyPrep decodes the body of add_n commands and panics on any
// other command, having replaced its body.
type panickyPrep struct{ *plainExec }

func (panickyPrep) Prepare(cmd *factum.Command) {
	if cmd.Name != "add_n" {
		cmd.Body = "half done"
		panic("prepare")
	}
	var a addN
	if json.Unmarshal(cmd.Body.(json.RawMessage), &a) == nil {
		cmd.Body = a
	}
}

// A Prepare that panics on a delivered command does not take the pull
// goroutine (and the process) down: the command keeps its body as
// delivered, for the processing to refuse as it would unprepared, and
// the other commands of its batch are prepared.
func TestAPanickingPrepareLeavesTheBodyAsDelivered(t *testing.T) {
	b := &Bus{proc: originExecutor(panickyPrep{&plainExec{}}, originHeader{}), cfg: BusConfig{Logger: slog.New(slog.DiscardHandler)}}
	mk := func(name, req string) *factum.Command {
		c := factum.NewCommand(tallyID("t-1"), json.RawMessage(`{"N":1}`))
		c.Name, c.RequestID = name, req
		return &c
	}
	for _, tc := range []struct {
		name string
		cmds []*factum.Command
		want []any
	}{
		{"a command", []*factum.Command{mk("add_x", "r0")}, []any{json.RawMessage(`{"N":1}`)}},
		{"a batch", []*factum.Command{mk("add_n", "r0"), mk("add_x", "r1"), mk("add_n", "r2")},
			[]any{addN{N: 1}, json.RawMessage(`{"N":1}`), addN{N: 1}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var data []byte
			count := ""
			if len(tc.cmds) == 1 {
				m, err := encodeCommand("p", tc.cmds[0], 0)
				if err != nil {
					t.Fatal(err)
				}
				data = m.Data
			} else {
				m := b.batchMsg(sends(t, tc.cmds), 0)
				data, count = m.Data, m.Header.Get(HeaderBatch)
			}
			var j job
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Fatalf("decodeJob panicked: %v", r)
					}
				}()
				var err error
				if j, err = b.decodeJob(data, count); err != nil {
					t.Fatal(err)
				}
			}()
			for i, c := range j.commands() {
				if !reflect.DeepEqual(c.Body, tc.want[i]) {
					t.Errorf("command %d: body %#v (%T), want %#v (%T)", i, c.Body, c.Body, tc.want[i], tc.want[i])
				}
			}
		})
	}
}
