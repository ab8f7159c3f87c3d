package compensation

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/factum-go/factum"
)

func TestRetrySpecJSONAndBackoff(t *testing.T) {
	s := DefaultRetrySpec()
	b, err := json.Marshal(s)
	if err != nil || string(b) != `{"maxRetries":10,"minBackoffMs":180000,"executionTimeoutMs":120000}` {
		t.Fatalf("json %s, %v", b, err)
	}
	var back RetrySpec
	if err := json.Unmarshal(b, &back); err != nil || back != s {
		t.Fatalf("round trip %+v, %v", back, err)
	}
	for retries, want := range map[int]time.Duration{0: 180 * time.Second, 1: 360 * time.Second, 3: 1440 * time.Second} {
		if got := s.Backoff(retries); got != want {
			t.Errorf("Backoff(%d) = %v, want %v", retries, got, want)
		}
	}
	if got := s.Backoff(1 << 20); got != maxBackoff {
		t.Errorf("Backoff saturates at %v, got %v", maxBackoff, got)
	}
}

func TestTimeJSON(t *testing.T) {
	tm := TimeOf(time.Date(2026, 3, 1, 12, 0, 0, 123456789, time.FixedZone("x", 3600)))
	b, err := json.Marshal(struct {
		T Time `json:"t"`
		Z Time `json:"z,omitzero"`
	}{T: tm})
	if err != nil || string(b) != fmt.Sprintf(`{"t":%d}`, tm.UnixMilli()) {
		t.Fatalf("json %s, %v", b, err)
	}
	var back struct{ T, Z Time }
	if err := json.Unmarshal([]byte(fmt.Sprintf(`{"T":%d,"Z":0}`, tm.UnixMilli())), &back); err != nil || !back.T.Equal(tm.Time) || !back.Z.IsZero() {
		t.Fatalf("decoded %+v, %v", back, err)
	}
	if tm.Nanosecond() != 123000000 || tm.Location() != time.UTC {
		t.Fatalf("TimeOf keeps %v", tm)
	}
	if err := json.Unmarshal([]byte(`"yesterday"`), &back.T); err == nil {
		t.Fatal("a string decoded as a time")
	}
	if TimeOf(time.Time{}).Millis() != 0 {
		t.Fatal("the zero time is not 0")
	}
}

func TestErrorInfoOf(t *testing.T) {
	if got := ErrorInfoOf(nil); got.Code != factum.CodeOk {
		t.Fatalf("nil: %+v", got)
	}
	e := ErrorInfoOf(factum.Errorf(factum.CodeInternalServerError, "function panicked: boom\ngoroutine 1 [running]:\nmain.f()"))
	if e.Code != factum.CodeInternalServerError || e.Message != "function panicked: boom" || !strings.Contains(e.Details, "goroutine 1") {
		t.Fatalf("panic error: %+v", e)
	}
	long := ErrorInfoOf(errors.New(strings.Repeat("é", maxDetailsLen)))
	if len(long.Message) > maxMessageLen+len("…") || len(long.Details) > maxDetailsLen+len("…") ||
		!utf8.ValidString(long.Message) || !utf8.ValidString(long.Details) {
		t.Fatalf("bounded to %d and %d bytes, valid UTF-8: %v %v", len(long.Message), len(long.Details), utf8.ValidString(long.Message), utf8.ValidString(long.Details))
	}
	if ErrorInfoOf(context.DeadlineExceeded).Code != factum.CodeRequestTimeout {
		t.Fatal("a deadline is not a timeout")
	}
}

func TestRecoverabilityOf(t *testing.T) {
	for _, c := range []struct {
		err  error
		want Recoverability
	}{
		{nil, RecoverabilityUnknown},
		{errors.New("plain"), RecoverabilityUnknown},
		{factum.IllegalArgument("bad"), RecoverabilityUnknown},
		{context.DeadlineExceeded, Recoverable},
		{factum.NewError(factum.CodeTooManyRequests, "busy"), Recoverable},
		{WithRecoverability(errors.New("bad data"), Unrecoverable), Unrecoverable},
		{fmt.Errorf("wrapped: %w", WithRecoverability(factum.IllegalState("x"), Recoverable)), Recoverable},
		{WithRecoverability(context.DeadlineExceeded, Unrecoverable), Unrecoverable},
		{WithRecoverability(errors.New("x"), "NONSENSE"), RecoverabilityUnknown},
	} {
		if got := RecoverabilityOf(c.err); got != c.want {
			t.Errorf("RecoverabilityOf(%v) = %s, want %s", c.err, got, c.want)
		}
	}
	marked := WithRecoverability(factum.IllegalState("x"), Unrecoverable)
	if !errors.Is(marked, factum.ErrIllegalState) || factum.CodeOf(marked) != factum.CodeIllegalState || marked.Error() != factum.IllegalState("x").Error() {
		t.Fatalf("the mark hides the error: %v", marked)
	}
	if WithRecoverability(nil, Unrecoverable) != nil {
		t.Fatal("a nil error was marked")
	}
	if _, err := ParseRecoverability("recoverable"); factum.CodeOf(err) != factum.CodeIllegalArgument {
		t.Fatalf("names are upper case: %v", err)
	}
	if r, err := ParseRecoverability("UNRECOVERABLE"); err != nil || r != Unrecoverable {
		t.Fatalf("parse: %v %v", r, err)
	}
}

func TestExecutionIDIsStable(t *testing.T) {
	a := ExecutionID(testFn, "ev-1")
	if a != ExecutionID(testFn, "ev-1") || a == ExecutionID(testFn, "ev-2") ||
		a == ExecutionID(factum.Function{Context: "shop", Processor: "summaries", Name: "other"}, "ev-1") {
		t.Fatal("execution IDs are not one per function and event")
	}
	if err := factum.ValidateID("execution id", a); err != nil {
		t.Fatal(err)
	}
}

// An execution's failed event, its stream and its function are members of
// the execution's own JSON object, where queries name them
// (state.eventId, state.function.processor), and read back whole.
func TestExecutionJSONHoldsTheFailedEventFlat(t *testing.T) {
	e := Execution{FailedEvent: FailedEvent{EventID: "ev-1", EventName: "order_placed",
		Aggregate: factum.NamedAggregate{Context: "shop", Aggregate: "order"}.WithID("o-1"), Version: 3,
		Function: factum.Function{Context: "shop", Processor: "totals", Name: "on_placed"}, Stage: factum.StageProjected},
		Status: StatusFailed}
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(b, &members); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"eventId", "eventName", "aggregate", "version", "function", "stage", "status"} {
		if _, ok := members[k]; !ok {
			t.Errorf("%s has no member %q", b, k)
		}
	}
	var back Execution
	if err := json.Unmarshal(b, &back); err != nil || back.FailedEvent != e.FailedEvent {
		t.Fatalf("round trip: %+v, %v; want %+v", back.FailedEvent, err, e.FailedEvent)
	}
}
