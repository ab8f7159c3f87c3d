package nats

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/eventstore"
	natsgo "github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// appendStreams appends n streams spread over aggregates cart-0..cart-9
// of tenants acme and globex.
func appendStreams(t *testing.T, store eventstore.Store, n int) []factum.EventStream {
	t.Helper()
	cart := factum.NamedAggregate{Context: "shop", Aggregate: "cart"}
	versions := map[string]int{}
	var out []factum.EventStream
	for i := range n {
		id := fmt.Sprintf("cart-%d", i%10)
		versions[id]++
		tenant := "acme"
		if i%10 >= 5 {
			tenant = "globex"
		}
		s := factum.EventStream{
			ID: factum.NewID(), AggregateID: cart.WithID(id).WithTenant(tenant), Version: versions[id],
			CommandID: factum.NewID(), RequestID: factum.NewID(), CreateTime: time.Now(),
			Events: []factum.DomainEvent{{ID: factum.NewID(), Name: "item_added", Sequence: 1, IsLast: true,
				Body: json.RawMessage(`{"sku":"sku-` + strconv.Itoa(i) + `"}`)}},
		}
		if err := store.Append(context.Background(), &s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

// runPublisher runs the publisher as a consumer group until it has read
// the whole log, then drains it.
func runPublisher(t *testing.T, store eventstore.Store, cps event.CheckpointStore, js jetstream.JetStream) {
	t.Helper()
	p, err := LogPublisher(LogConfig{JetStream: js, Context: "shop"})
	if err != nil {
		t.Fatal(err)
	}
	c, err := event.NewConsumer(p, event.Config{Log: store, Checkpoints: cps, PollInterval: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	c.Drain()
	if err := c.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// Every stream of the log reaches JetStream once, in log order, with its
// identity in the headers; a redelivery from an old checkpoint (a crash
// before the checkpoint moved) adds nothing.
func TestLogPublisherPublishesEveryStreamOnce(t *testing.T) {
	url := startServer(t).ClientURL()
	nc, err := natsgo.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, _ := jetstream.New(nc)
	ctx := context.Background()
	st, err := EnsureLog(ctx, LogConfig{JetStream: js, Context: "shop"})
	if err != nil {
		t.Fatal(err)
	}
	store := eventstore.NewMemory()
	want := appendStreams(t, store, 50)
	cps := event.NewMemoryCheckpoints()
	runPublisher(t, store, cps, js)
	// A crash before the checkpoint moved: the log is read again from the
	// start by a fresh consumer.
	runPublisher(t, store, event.NewMemoryCheckpoints(), js)

	info, err := st.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Msgs != uint64(len(want)) {
		t.Fatalf("the log stream holds %d messages, want %d", info.State.Msgs, len(want))
	}
	cons, err := st.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	for i, w := range want {
		m, err := cons.Next(jetstream.FetchMaxWait(5 * time.Second))
		if err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
		var got factum.EventStream
		if err := json.Unmarshal(m.Data(), &got); err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
		if got.ID != w.ID || got.Version != w.Version || got.AggregateID.ID != w.AggregateID.ID ||
			string(got.Events[0].Body) != string(w.Events[0].Body) {
			t.Errorf("message %d: got stream %s v%d of %s, want %s v%d of %s", i, got.ID, got.Version, got.AggregateID.ID, w.ID, w.Version, w.AggregateID.ID)
		}
		h := m.Headers()
		if h.Get(jetstream.MsgIDHeader) != w.ID || h.Get(HeaderTenant) != w.AggregateID.Tenant ||
			h.Get(HeaderAggregateID) != w.AggregateID.ID || h.Get(HeaderVersion) != strconv.Itoa(w.Version) {
			t.Errorf("message %d: headers %v", i, h)
		}
		if m.Subject() != "factum.log.shop.cart" {
			t.Errorf("message %d: subject %s", i, m.Subject())
		}
	}
}

func TestLogConfigIsChecked(t *testing.T) {
	if _, err := LogPublisher(LogConfig{Context: "shop"}); err == nil {
		t.Error("a publisher without JetStream was made")
	}
	if _, err := EnsureLog(context.Background(), LogConfig{Context: "Shop!"}); err == nil {
		t.Error("a log with a bad context was made")
	}
}
