package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/compensation"
	"github.com/factum-go/factum/engine"
	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/examples/cart"
	"github.com/factum-go/factum/httpapi"
	"github.com/factum-go/factum/internal/compensationtest"
	"github.com/factum-go/factum/snapshot"
)

// The compensation sub-commands drive a server whose projection failed.
func TestCompensationCommands(t *testing.T) {
	snaps := snapshot.NewMemory()
	var failing atomic.Bool
	failing.Store(true)
	proj := event.MustProcessor(boundedContext, "flaky", factum.StageProjected,
		event.On(func(context.Context, event.Message, cart.ItemAdded) error {
			if failing.Load() {
				return errors.New("downstream offline")
			}
			return nil
		}))
	rt, comp := compensationtest.Start(t, compensation.Config{Context: boundedContext, Snapshots: snaps}, engine.Config{
		Store: eventstore.NewMemory(), Processors: []*event.Processor{proj}, Events: event.Config{Attempts: 1}},
		cart.New(catalog(), cart.DefaultLimits))
	ctx := context.Background()
	h, err := httpapi.New(httpapi.Config{Engine: rt, SnapshotStore: snaps, Compensation: comp.Service()})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()

	// PROJECTED fails, and the failure is recorded before the consumer
	// moves on: the wait returns after the record.
	_, err = rt.Gateway().SendAndWait(ctx, factum.NewCommand(carts.WithID("c-1"), cart.AddItem{SKU: "sku-1", Qty: 1}), command.Wait(factum.StageProjected))
	if err == nil {
		t.Fatal("the failing projection's wait succeeded")
	}

	var out, errOut bytes.Buffer
	cli := func(args ...string) int {
		out.Reset()
		errOut.Reset()
		return run(ctx, append(args, "--url", srv.URL, "--json"), &out, &errOut)
	}
	var page struct {
		Total int64               `json:"total"`
		List  []compensation.Item `json:"list"`
	}
	deadline := time.Now().Add(10 * time.Second)
	for page.Total == 0 {
		if code := cli("compensation", "list", "--status", "FAILED"); code != 0 {
			t.Fatalf("list: %d %s", code, errOut.String())
		}
		if err := json.Unmarshal(out.Bytes(), &page); err != nil {
			t.Fatalf("list output %s: %v", out.String(), err)
		}
		if time.Now().After(deadline) {
			t.Fatal("the failure never showed up")
		}
	}
	id := page.List[0].ID.ID
	if code := cli("compensation", "show", id); code != 0 || !strings.Contains(out.String(), "downstream offline") {
		t.Fatalf("show: %d %s %s", code, out.String(), errOut.String())
	}
	if code := cli("compensation", "recoverable", id, "sometimes"); code != 1 || !strings.Contains(errOut.String(), "400 IllegalArgument") {
		t.Fatalf("bad recoverability: %d %s", code, errOut.String())
	}
	if code := cli("compensation", "recoverable", id, "UNRECOVERABLE", "--operator", "ops"); code != 0 {
		t.Fatalf("recoverable: %d %s", code, errOut.String())
	}
	failing.Store(false)
	if code := cli("compensation", "retry", id, "--operator", "ops"); code != 0 || !strings.Contains(out.String(), `"SUCCEEDED"`) {
		t.Fatalf("retry: %d %s %s", code, out.String(), errOut.String())
	}
	// Counts read the snapshot store, which the snapshotter updates just
	// after the retry's PROCESSED.
	deadline = time.Now().Add(10 * time.Second)
	for {
		if code := cli("compensation", "counts"); code != 0 {
			t.Fatalf("counts: %d %s", code, errOut.String())
		}
		if strings.Contains(out.String(), `"succeeded": 1`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("counts: %s", out.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
}
