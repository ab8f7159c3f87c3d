package nats

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/factum-go/factum"
	natsgo "github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// deliveredMsg is a delivered message of which the bus reads the body and
// the headers alone.
type deliveredMsg struct {
	jetstream.Msg
	data   []byte
	header natsgo.Header
}

func (m deliveredMsg) Data() []byte           { return m.data }
func (m deliveredMsg) Headers() natsgo.Header { return m.header }

// A delivered command handed over to the stream carries the body it was
// delivered with, though the executor decoded it into a type that lacks
// some of its fields (Preparer): the next owner, a newer version that
// knows them, gets them. So do the command's other fields.
func TestAHandedOverDeliveredCommandKeepsItsBody(t *testing.T) {
	w := inProcessWorld(t, 2, 3*time.Second)
	n := w.node(t, "a", BusConfig{Local: LocalFirst})
	eb, err := n.newBus(&plainExec{}, sigSink(make(chan factum.Signal, 16)))
	if err != nil {
		t.Fatal(err)
	}
	bus := eb.(*Bus)
	stream, err := n.js.Stream(context.Background(), w.stream)
	if err != nil {
		t.Fatal(err)
	}
	for i, tc := range []struct {
		name     string
		commands int
		k        int
	}{
		{"a command", 1, 0},
		{"a batch", 3, 0},
		{"the rest of a batch", 3, 1},
		{"a batch's last command", 3, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id := fmt.Sprintf("handed-body-%d", i)
			part := PartitionOf(id, len(bus.state))
			var sent, prepared []*factum.Command
			for c := range tc.commands {
				body := fmt.Sprintf(`{"N":%d,"Since":"v2","Tags":["a","b"]}`, c+1)
				cmd := factum.NewCommand(tallyID(id), json.RawMessage(body))
				cmd.Name, cmd.RequestID, cmd.AllowCreate = "add_n", fmt.Sprintf("%s-r%d", id, c), true
				cmd.Header = map[string]string{"k": fmt.Sprint(c)}
				sent = append(sent, &cmd)
				typed := cmd
				typed.Body = addN{N: c + 1} // as Prepare leaves it
				prepared = append(prepared, &typed)
			}
			var m *natsgo.Msg
			if len(sent) == 1 {
				if m, err = encodeCommand(w.prefix, sent[0], part); err != nil {
					t.Fatal(err)
				}
			} else {
				m = bus.batchMsg(sends(t, sent), part)
			}
			j := &job{cmd: prepared[0], more: prepared[1:], n: part, msg: deliveredMsg{data: m.Data, header: m.Header}, seq: 7}
			seq, err := bus.publishHanded(context.Background(), j, tc.k, handedID(j, tc.k))
			if err != nil {
				t.Fatal(err)
			}
			raw, err := stream.GetMsg(context.Background(), seq)
			if err != nil {
				t.Fatal(err)
			}
			if want := HandedSubject(w.prefix, tallyID(id).NamedAggregate, part); raw.Subject != want {
				t.Errorf("subject %q, want %q", raw.Subject, want)
			}
			stored := []*factum.Command{}
			if count := raw.Header.Get(HeaderBatch); count != "" {
				if stored, err = decodeBatch(raw.Data, count); err != nil {
					t.Fatal(err)
				}
			} else {
				cmd, err := decodeCommand(raw.Data)
				if err != nil {
					t.Fatal(err)
				}
				stored = append(stored, cmd)
			}
			want := sent[tc.k:]
			if len(stored) != len(want) {
				t.Fatalf("stored %d commands, want %d", len(stored), len(want))
			}
			for c, got := range stored {
				if !sameJSON(t, got.Body, want[c].Body) {
					t.Errorf("command %d: body %s, want %s", c, got.Body, want[c].Body)
				}
				gc, wc := *got, *want[c]
				gc.Body, wc.Body = nil, nil
				gc.CreateTime, wc.CreateTime = gc.CreateTime.UTC(), wc.CreateTime.UTC()
				if !reflect.DeepEqual(gc, wc) {
					t.Errorf("command %d: %+v, want %+v", c, gc, wc)
				}
			}
		})
	}
}

// sameJSON reports whether a and b, command bodies, are the same JSON.
func sameJSON(t *testing.T, a, b any) bool {
	t.Helper()
	var va, vb any
	for _, p := range []struct {
		body any
		v    *any
	}{{a, &va}, {b, &vb}} {
		raw, ok := p.body.(json.RawMessage)
		if !ok {
			return false
		}
		if err := json.Unmarshal(raw, p.v); err != nil {
			t.Fatal(err)
		}
	}
	return reflect.DeepEqual(va, vb)
}
