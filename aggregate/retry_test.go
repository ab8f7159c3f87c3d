package aggregate_test

import (
	"errors"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/aggregate"
	"github.com/factum-go/factum/eventstore"
)

// sqlStateError is a driver error with a SQLSTATE, as pgconn.PgError is.
type sqlStateError string

func (e sqlStateError) Error() string    { return "injected SQLSTATE " + string(e) }
func (e sqlStateError) SQLState() string { return string(e) }

// sqliteError is a driver error with a result code, as modernc's is.
type sqliteError int

func (e sqliteError) Error() string { return fmt.Sprintf("injected sqlite code %d", int(e)) }
func (e sqliteError) Code() int     { return int(e) }

// The processor retries a recoverable failure exactly DefaultRetries (3)
// times: a version conflict and a transient store error alike. Other
// failures are not retried.
func TestProcessorRetriesRecoverableFailuresThreeTimes(t *testing.T) {
	if aggregate.DefaultRetries != 3 {
		t.Fatalf("DefaultRetries = %d, the specification says 3", aggregate.DefaultRetries)
	}
	tests := []struct {
		name    string
		err     error
		appends int
		code    factum.Code
	}{
		{"version conflict", factum.NewError(factum.CodeEventVersionConflict, "injected"), 4, factum.CodeEventVersionConflict},
		{"serialization failure", fmt.Errorf("append: %w", sqlStateError("40001")), 4, factum.CodeInternalServerError},
		{"deadlock", sqlStateError("40P01"), 4, factum.CodeInternalServerError},
		{"connection exception", sqlStateError("08006"), 4, factum.CodeInternalServerError},
		{"admin shutdown", sqlStateError("57P01"), 4, factum.CodeInternalServerError},
		{"connection reset", fmt.Errorf("write: %w", syscall.ECONNRESET), 4, factum.CodeInternalServerError},
		{"sqlite busy", sqliteError(5 | 2<<8), 4, factum.CodeInternalServerError},
		{"unique violation", sqlStateError("23505"), 1, factum.CodeInternalServerError},
		{"plain error", errors.New("disk full"), 1, factum.CodeInternalServerError},
		// The store's tenant refusal is answered as for a missing aggregate,
		// revealing nothing of the other tenant, and not retried.
		{"tenant mismatch", factum.NewError(factum.CodeTenantMismatch, "injected"), 1, factum.CodeNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := &faultyStore{Store: eventstore.NewMemory(), fail: func(int) (error, bool) { return tt.err, false }}
			p := newProc(t, store, aggregate.ExecutorConfig{Backoff: time.Microsecond})
			sig := send(p, accounts.ID("a-1"), deposit{Amount: 1})
			if got := store.count(); got != tt.appends {
				t.Fatalf("%d appends, want %d", got, tt.appends)
			}
			if sig.Code != tt.code {
				t.Fatalf("code %s (%s), want %s", sig.Code, sig.Message, tt.code)
			}
		})
	}
}

// A transient failure that clears up is retried into a success.
func TestTransientFailureRecovers(t *testing.T) {
	store := &faultyStore{Store: eventstore.NewMemory(), fail: func(n int) (error, bool) {
		if n <= 2 {
			return sqlStateError("40001"), false
		}
		return nil, false
	}}
	p := newProc(t, store, aggregate.ExecutorConfig{Backoff: time.Microsecond})
	if sig := send(p, accounts.ID("a-1"), deposit{Amount: 1}); !sig.Succeeded() || sig.AggregateVersion != 1 || store.count() != 3 {
		t.Fatalf("%+v after %d appends", sig, store.count())
	}
}

// An append that committed although the store reported a transient error
// is not appended twice: the retry finds its request.
func TestTransientFailureAfterCommitIsNotDoubled(t *testing.T) {
	store := &faultyStore{Store: eventstore.NewMemory(), fail: func(n int) (error, bool) {
		if n == 1 {
			return sqlStateError("08006"), true
		}
		return nil, false
	}}
	p := newProc(t, store, aggregate.ExecutorConfig{Backoff: time.Microsecond})
	id := accounts.ID("a-1")
	sig := send(p, id, deposit{Amount: 1})
	if !sig.Succeeded() || sig.AggregateVersion != 1 {
		t.Fatalf("%+v", sig)
	}
	if s, _ := store.Load(t.Context(), id.WithTenant(factum.DefaultTenant), 1, eventstore.MaxVersion); len(s) != 1 {
		t.Fatalf("%d streams, want 1", len(s))
	}
}

// An append whose outcome is unknown (an error no one recognises, after the
// write committed) is settled by looking the request up: the command
// succeeded, with its own stream, and is not marked a duplicate.
func TestUnknownOutcomeIsLookedUp(t *testing.T) {
	store := &faultyStore{Store: eventstore.NewMemory(), fail: func(n int) (error, bool) {
		if n == 1 {
			return errors.New("connection lost during commit"), true
		}
		return nil, false
	}}
	p := newProc(t, store, aggregate.ExecutorConfig{Backoff: time.Microsecond})
	sig := send(p, accounts.ID("a-1"), deposit{Amount: 1})
	if !sig.Succeeded() || sig.AggregateVersion != 1 || sig.Duplicate {
		t.Fatalf("%+v, want success at version 1, no duplicate", sig)
	}
	if got := store.count(); got != 1 {
		t.Fatalf("%d appends, want 1", got)
	}
}

func TestIsTransient(t *testing.T) {
	for _, err := range []error{sqlStateError("40001"), syscall.ECONNREFUSED, sqliteError(6)} {
		if !aggregate.IsTransient(err) {
			t.Errorf("%v: not transient", err)
		}
	}
	for _, err := range []error{nil, t.Context().Err(), errors.New("x"), sqlStateError("23505"), sqliteError(19), factum.IllegalState("x")} {
		if aggregate.IsTransient(err) {
			t.Errorf("%v: transient", err)
		}
	}
}
