package httpapi_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/engine"
	"github.com/factum-go/factum/httpapi"
)

// consumers declares two snapshot functions for every stream.
type consumers []factum.Function

func (c consumers) FunctionsFor(stage factum.CommandStage, _ factum.NamedAggregate, _ []string) []factum.Function {
	if stage == factum.StageSnapshot {
		return c
	}
	return nil
}

var snapshotFns = consumers{
	{Context: "shop", Processor: "snapshotter", Name: "one"},
	{Context: "shop", Processor: "snapshotter", Name: "two"},
}

// signalFromLog plays the event side: it reads the store's global log and
// signals SNAPSHOT for every stream from each function, until ctx ends.
func signalFromLog(ctx context.Context, rt *engine.Engine) {
	var pos factum.Position
	for ctx.Err() == nil {
		streams, err := rt.Store().ReadLog(ctx, pos, 100)
		if err != nil {
			return
		}
		for _, s := range streams {
			for _, fn := range snapshotFns {
				rt.Signals().Signal(factum.Signal{
					CommandID: s.CommandID, RequestID: s.RequestID, Stage: factum.StageSnapshot,
					Function: fn, AggregateID: s.AggregateID, AggregateVersion: s.Version, Code: factum.CodeOk, SignalTime: time.Now(),
				})
			}
			pos = s.Position
		}
		if len(streams) == 0 {
			_ = rt.Store().WaitLog(ctx, pos)
		}
	}
}

type sseEvent struct {
	name string
	res  command.Result
}

// readSSE parses a text/event-stream body into events.
func readSSE(t *testing.T, r response) []sseEvent {
	t.Helper()
	var out []sseEvent
	var cur sseEvent
	sc := bufio.NewScanner(strings.NewReader(string(r.body)))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			cur.name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &cur.res); err != nil {
				t.Fatalf("data %q: %v", line, err)
			}
		case line == "":
			out = append(out, cur)
			cur = sseEvent{}
		}
	}
	return out
}

func TestSSEDeliversEveryStage(t *testing.T) {
	f := newFixture(t, func(rc *engine.Config, _ *httpapi.Config) { rc.Consumers = snapshotFns })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go signalFromLog(ctx, f.rt)

	r := f.do(t, "POST", "/cart/c1/add_item", `{"sku":"sku-1","qty":1}`,
		"Accept", "text/event-stream", httpapi.HeaderWaitStage, "SNAPSHOT")
	wantOK(t, r)
	if ct := r.header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	events := readSSE(t, r)
	var names []string
	fns := map[string]bool{}
	for _, e := range events {
		names = append(names, e.name)
		if e.name != e.res.Stage.String() || e.res.Code != factum.CodeOk {
			t.Fatalf("event %s with result %+v", e.name, e.res)
		}
		if e.name == "SNAPSHOT" {
			fns[e.res.Function.Name] = true
		}
	}
	if got := strings.Join(names, ","); got != "SENT,PROCESSED,SNAPSHOT,SNAPSHOT" {
		t.Fatalf("events %s, want SENT,PROCESSED,SNAPSHOT,SNAPSHOT", got)
	}
	if !fns["one"] || !fns["two"] {
		t.Fatalf("snapshot functions %v, want one and two", fns)
	}

	// Narrowed to one function by the Command-Wait-Function header: the
	// stream ends with that function's signal (other signals of the stage
	// that come first are streamed too, being signals on the way).
	r = f.do(t, "POST", "/cart/c1/add_item", `{"sku":"sku-1","qty":1}`,
		"Accept", "text/event-stream", httpapi.HeaderWaitStage, "SNAPSHOT", httpapi.HeaderWaitFunction, "two")
	events = readSSE(t, r)
	if len(events) < 3 || events[len(events)-1].res.Function.Name != "two" {
		t.Fatalf("narrowed events %+v", events)
	}
}

func TestSSEFailures(t *testing.T) {
	f := newFixture(t, nil)
	// A failure before SENT is an ordinary error response.
	wantError(t, f.do(t, "POST", "/cart/c1/add_item", `{"sku":"","qty":0}`, "Accept", "text/event-stream"),
		http.StatusBadRequest, factum.CodeCommandValidation)
	// A failure at PROCESSED is the stream's last event.
	r := f.do(t, "POST", "/cart/c1/remove_item", `{"sku":"sku-1"}`, "Accept", "text/event-stream")
	wantOK(t, r)
	events := readSSE(t, r)
	if len(events) != 2 || events[0].name != "SENT" || events[1].name != "PROCESSED" || events[1].res.Code != factum.CodeNotFound {
		t.Fatalf("events %+v, want SENT then a failed PROCESSED", events)
	}
}
