package httpapi_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/aggregate"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/engine"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/httpapi"
	"github.com/factum-go/factum/snapshot"
)

type (
	ledger         struct{ N int }
	openLedger     struct{}
	ledgerOpened   struct{}
	secretAdjust   struct{}
	secretAdjusted struct{}
	auditRecord    struct{ N int }
	recordAudit    struct{}
	auditRecorded  struct{}
)

// Internal aggregate types and internal commands have no route and are
// not in the OpenAPI document; the gateway still serves them.
func TestInternalNotRouted(t *testing.T) {
	ledgers := aggregate.New[ledger]("test", "ledger",
		aggregate.Source(func(l *ledger, _ ledgerOpened) { l.N++ }),
		aggregate.Source(func(l *ledger, _ secretAdjusted) { l.N += 100 }),
		aggregate.Handle(func(context.Context, ledger, openLedger) ([]any, error) { return []any{ledgerOpened{}}, nil }, aggregate.AllowCreate()),
		aggregate.Handle(func(context.Context, ledger, secretAdjust) ([]any, error) { return []any{secretAdjusted{}}, nil }, aggregate.InternalCommand()),
	)
	audits := aggregate.New[auditRecord]("test", "audit_record",
		aggregate.Internal[auditRecord](),
		aggregate.Source(func(a *auditRecord, _ auditRecorded) { a.N++ }),
		aggregate.Handle(func(context.Context, auditRecord, recordAudit) ([]any, error) { return []any{auditRecorded{}}, nil }, aggregate.AllowCreate()),
	)
	if aggregate.Public(audits) || !aggregate.Public(ledgers) || !audits.IsInternal() {
		t.Fatal("Public/IsInternal disagree with the definitions")
	}
	rt, err := engine.New(engine.Config{Store: eventstore.NewMemory()}, ledgers, audits)
	if err != nil {
		t.Fatal(err)
	}
	f := serve(t, rt, httpapi.Config{SnapshotStore: snapshot.NewMemory()})
	wantOK(t, f.do(t, "POST", "/ledger/l-1/open_ledger", ""))
	// Through Go, the internal command and type work.
	ctx := context.Background()
	if _, err := rt.Gateway().SendAndWait(ctx, factum.NewCommand(ledgers.ID("l-1"), secretAdjust{}), command.Wait(factum.StageProcessed)); err != nil {
		t.Fatal(err)
	}
	if _, err := rt.Gateway().SendAndWait(ctx, factum.NewCommand(audits.ID("a-1"), recordAudit{}), command.Wait(factum.StageProcessed)); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ method, path string }{
		{"POST", "/ledger/l-1/secret_adjust"},
		{"POST", "/tenant/default/ledger/l-1/secret_adjust"},
		{"POST", "/audit_record/a-1/record_audit"},
		{"POST", "/test.audit_record/a-1/record_audit"},
		{"POST", "/audit_record/record_audit"},
		{"DELETE", "/audit_record/a-1"},
		{"PUT", "/audit_record/a-1/recover"},
		{"GET", "/audit_record/a-1/state"},
		{"GET", "/audit_record/a-1/event/1/1"},
		{"GET", "/audit_record/a-1/snapshot"},
		{"POST", "/audit_record/snapshot/count"},
	} {
		wantError(t, f.do(t, c.method, c.path, "{}"), http.StatusNotFound, factum.CodeNotFound)
	}
	doc := f.do(t, "GET", "/openapi.json", "")
	wantOK(t, doc)
	// (secret_adjusted stays: the public ledger's streams hold it.)
	for _, name := range []string{"audit_record", "record_audit", "audit_recorded", `"secret_adjust"`, "ledger.secret_adjust"} {
		if strings.Contains(string(doc.body), name) {
			t.Fatalf("the OpenAPI document names internal %q", name)
		}
	}
	if !strings.Contains(string(doc.body), "open_ledger") || !strings.Contains(string(doc.body), "ledger_opened") || !strings.Contains(string(doc.body), "secret_adjusted") {
		t.Fatal("the OpenAPI document lost the public command or event")
	}
}
