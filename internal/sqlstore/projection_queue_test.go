package sqlstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/projection"
)

// recorder is a transaction's executor that records what reaches the
// database: statements run one by one, and batches (batchRecorder, which
// has ExecBatch).
type recorder struct {
	mu      sync.Mutex
	execs   []string
	batches [][]string
}

func (r *recorder) Exec(_ context.Context, query string, _ ...any) (int64, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.execs = append(r.execs, query)
	return 1, nil
}

func (r *recorder) Query(context.Context, string, ...any) (Rows, error) {
	return nil, fmt.Errorf("recorder: no Query")
}

// QueryRow answers the checkpoint's load: the log's start.
func (r *recorder) QueryRow(_ context.Context, query string, _ ...any) Row {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.execs = append(r.execs, query)
	return zeroRow{}
}

type zeroRow struct{}

func (zeroRow) Scan(dest ...any) error {
	for _, d := range dest {
		*(d.(*int64)) = 0
	}
	return nil
}

type batchRecorder struct{ *recorder }

func (r batchRecorder) ExecBatch(_ context.Context, stmts []Statement) ([]int64, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var b []string
	rows := make([]int64, len(stmts))
	for i, s := range stmts {
		b = append(b, s.SQL)
		rows[i] = 1
	}
	r.batches = append(r.batches, b)
	return rows, nil
}

// A batch's queued statements and its checkpoint's upsert reach a
// backend with ExecBatch in one batch, in the order queued; without
// ExecBatch they run one by one, in the same order. Either way nothing
// else runs between the checkpoint's lock and the commit.
func TestQueuedStatementsOfABatchGoInOneRoundTrip(t *testing.T) {
	for _, batched := range []bool{true, false} {
		t.Run(fmt.Sprintf("ExecBatch=%v", batched), func(t *testing.T) {
			rec := &recorder{}
			var ex Executor = rec
			if batched {
				ex = batchRecorder{rec}
			}
			d := &Dialect{Name: "fake", Param: Numbered("$"), NoRows: func(error) bool { return false }}
			cps := &Checkpoints{d: d, table: `"cps"`, Upsert: "UPSERT CHECKPOINT", Load: "LOAD CHECKPOINT"}
			commits := 0
			store := NewProjections(ProjectionsConfig{Checkpoints: cps, Context: "shop", Lock: true,
				Begin: func(context.Context) (Executor, any, func(context.Context, bool) error, error) {
					return ex, nil, func(_ context.Context, commit bool) error {
						if commit {
							commits++
						}
						return nil
					}, nil
				}})
			log := eventstore.NewMemory()
			cart := factum.NamedAggregate{Context: "shop", Aggregate: "cart"}
			for i := range 5 {
				s := factum.EventStream{ID: factum.NewID(), AggregateID: cart.WithID(fmt.Sprintf("c-%d", i)), Version: 1,
					CommandID: factum.NewID(), RequestID: factum.NewID(), CreateTime: time.Now(),
					Events: []factum.DomainEvent{{ID: factum.NewID(), Name: "item_added", Sequence: 1, IsLast: true, Body: json.RawMessage(`{}`)}}}
				if err := log.Append(context.Background(), &s); err != nil {
					t.Fatal(err)
				}
			}
			p, err := projection.New("shop", "items", func(_ context.Context, tx projection.Tx, s *factum.EventStream) error {
				tx.Queue(projection.Statement{SQL: "INSERT " + s.AggregateID.ID})
				tx.Queue(projection.Statement{SQL: "UPSERT " + s.AggregateID.ID})
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			r, err := projection.NewRunner(p, projection.Config{Log: log, Store: store, BatchSize: 64})
			if err != nil {
				t.Fatal(err)
			}
			r.Drain()
			if err := r.Run(context.Background()); err != nil {
				t.Fatal(err)
			}
			var want []string
			for i := range 5 {
				want = append(want, fmt.Sprintf("INSERT c-%d", i), fmt.Sprintf("UPSERT c-%d", i))
			}
			want = append(want, "UPSERT CHECKPOINT")
			// Apart from the checkpoint's two reads (a look, then the
			// batch's lock, both "INSERT INTO … RETURNING").
			var got []string
			for _, q := range rec.execs {
				if !strings.HasPrefix(q, "INSERT INTO") { // the checkpoint's lock
					got = append(got, q)
				}
			}
			if batched {
				if len(rec.batches) != 1 || strings.Join(rec.batches[0], "; ") != strings.Join(want, "; ") || len(got) != 0 {
					t.Errorf("batches %q and one by one %q, want one batch %q", rec.batches, got, want)
				}
			} else if strings.Join(got, "; ") != strings.Join(want, "; ") {
				t.Errorf("one by one %q, want %q", got, want)
			}
			if locks := len(rec.execs) - len(got); locks != 2 || commits != 1 {
				t.Errorf("%d checkpoint reads and %d commits, want 2 (a look, then the batch's lock) and 1", locks, commits)
			}
		})
	}
}

// A queued statement's Check that panics fails that statement, as a
// panicking function fails its stream: the queue runs at the commit,
// outside the function, so the panic would otherwise end the process.
func TestAPanickingCheckIsItsStatementsFailure(t *testing.T) {
	for _, batched := range []bool{true, false} {
		t.Run(fmt.Sprintf("ExecBatch=%v", batched), func(t *testing.T) {
			var ex Executor = &recorder{}
			if batched {
				ex = batchRecorder{ex.(*recorder)}
			}
			q := &txQueue{raw: ex, d: &Dialect{Name: "fake"}}
			q.queue(projection.Statement{SQL: "INSERT a"})
			q.queue(projection.Statement{SQL: "UPDATE b", Check: func(int64) error { panic("the check's bug") }})
			q.queue(projection.Statement{SQL: "INSERT c"})
			err := q.flush(context.Background())
			qe, ok := errors.AsType[*projection.QueuedError](err)
			if !ok || qe.Index != 1 || factum.CodeOf(err) != factum.CodeInternalServerError {
				t.Fatalf("flush: %v, want the QueuedError of statement 1, InternalServerError", err)
			}
			if _, err := q.Exec(context.Background(), "SELECT 1"); !errors.Is(err, qe) {
				t.Errorf("Exec after the failure: %v, want the same failure", err)
			}
		})
	}
}

// failingEnd is a batch executor whose statements all run, after which
// the round trip fails, as a pgx batch's Close can when the connection
// drops before the pipeline's end is read.
type failingEnd struct{ *recorder }

func (f failingEnd) ExecBatch(_ context.Context, stmts []Statement) ([]int64, error) {
	return make([]int64, len(stmts)), errors.New("fake: connection lost at the batch's end")
}

// A batch whose statements all ran and whose round trip then failed is
// the transaction's failure, charged to no queued statement.
func TestABatchFailingAfterItsStatementsIsTheTransactions(t *testing.T) {
	q := &txQueue{raw: failingEnd{&recorder{}}, d: &Dialect{Name: "fake"}}
	q.queue(projection.Statement{SQL: "INSERT a"})
	q.queue(projection.Statement{SQL: "INSERT b"})
	err := q.flush(context.Background())
	if _, queued := errors.AsType[*projection.QueuedError](err); err == nil || queued {
		t.Fatalf("flush: %v, want the transaction's error, no QueuedError", err)
	}
	if err2 := q.flush(context.Background()); err2 != err {
		t.Errorf("flush again: %v, want %v", err2, err)
	}
}
