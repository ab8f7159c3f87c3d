package compensation_test

import (
	"context"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/compensation"
	"github.com/factum-go/factum/eventstore"
)

// An execution record lives in the tenant of the stream it names: a record
// in tenant b naming tenant a's event is refused, so no retry of it can
// re-deliver a's event to a function on b's behalf.
func TestExecutionRecordInAnotherTenantRefused(t *testing.T) {
	f := newFixture(t, eventstore.NewMemory(), options{})
	eventID := f.placeIn("o-a", "a", 1)
	ctx := context.Background()
	rec := compensation.RecordExecutionFailure{
		FailedEvent: compensation.FailedEvent{EventID: eventID, EventName: "order_placed",
			Aggregate: orders.ID("o-a").WithTenant("a"), Version: 1,
			Function: totalsFn, Stage: factum.StageProjected},
		Error:     compensation.ErrorInfo{Code: factum.CodeInternalServerError, Message: "forged"},
		RetrySpec: compensation.DefaultRetrySpec(), Recoverability: compensation.Recoverable,
		At: compensation.TimeOf(f.clock.Now()),
	}
	id := f.comp.Named().WithID(compensation.ExecutionID(totalsFn, eventID))
	_, err := f.rt.Gateway().SendAndWait(ctx, factum.NewCommand(id.WithTenant("b"), rec), command.Wait(factum.StageProcessed))
	if factum.CodeOf(err) != factum.CodeIllegalArgument {
		t.Fatalf("record in tenant b naming tenant a's stream: %v, want IllegalArgument", err)
	}
	if _, err := f.svc.Get(ctx, id.ID); factum.CodeOf(err) != factum.CodeNotFound {
		t.Fatalf("forged execution stored: %v", err)
	}
	// In the stream's own tenant the same record is accepted.
	if _, err := f.rt.Gateway().SendAndWait(ctx, factum.NewCommand(id.WithTenant("a"), rec), command.Wait(factum.StageProcessed)); err != nil {
		t.Fatalf("record in the stream's tenant: %v", err)
	}
}
