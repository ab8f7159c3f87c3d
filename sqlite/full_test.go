package sqlite_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/sqlite"
)

// fullCart is the aggregate type of the out-of-space test.
var fullCart = factum.NamedAggregate{Context: "shop", Aggregate: "cart"}

// bigStream is a one-event stream with a 2 KiB body, so that a few dozen
// fill a page budget.
func bigStream(id factum.AggregateID, version int, requestID string) *factum.EventStream {
	return &factum.EventStream{
		ID: factum.NewID(), AggregateID: id, Version: version,
		CommandID: factum.NewID(), RequestID: requestID, CreateTime: time.Now(),
		Events: []factum.DomainEvent{{
			ID: factum.NewID(), Name: "item_added", Sequence: 1, IsLast: true,
			Body: []byte(`{"sku":"` + strings.Repeat("x", 2048) + `","qty":1}`),
		}},
	}
}

func pragmaInt(t *testing.T, db *sqlite.DB, pragma string) int {
	t.Helper()
	var n int
	if err := db.Writer().QueryRow("PRAGMA " + pragma).Scan(&n); err != nil {
		t.Fatalf("PRAGMA %s: %v", pragma, err)
	}
	return n
}

func integrityOK(t *testing.T, db *sqlite.DB) {
	t.Helper()
	var res string
	if err := db.Writer().QueryRow("PRAGMA integrity_check").Scan(&res); err != nil {
		t.Fatal(err)
	}
	if res != "ok" {
		t.Fatalf("integrity_check: %s", res)
	}
}

// The database runs out of space (PRAGMA max_page_count caps the file, so
// SQLite answers SQLITE_FULL exactly as on a full disk) under concurrent
// appends: the appends that do not fit fail with an error saying the
// database is full (never a conflict, never a panic), every acknowledged
// append is stored, nothing else is, the file passes integrity_check, and
// appends succeed again once there is room, without reopening.
func TestEventStoreOutOfSpace(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "full.db")
	db, err := sqlite.Open(ctx, path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	st, err := sqlite.NewEventStore(ctx, db, "shop", sqlite.EventStoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	acked := map[factum.AggregateID][]string{}
	for round := range 3 {
		fillUp(t, db, st, round, acked)
	}
	// Reopened, the file holds exactly what was acknowledged.
	if err := errors.Join(st.Close(), db.Close()); err != nil {
		t.Fatal(err)
	}
	db, err = sqlite.Open(ctx, path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	integrityOK(t, db)
	st, err = sqlite.NewEventStore(ctx, db, "shop", sqlite.EventStoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for id, rids := range acked {
		streams, err := st.Load(ctx, id, 1, eventstore.MaxVersion)
		if err != nil {
			t.Fatal(err)
		}
		if len(streams) != len(rids) {
			t.Errorf("%s after reopening: %d streams, %d acknowledged", id, len(streams), len(rids))
		}
	}
}

// fillUp caps the database 40 pages above its size, appends on 8 writers
// until each fails, checks the failures and the data, then lifts the cap
// and checks that appends succeed again. acked carries what was
// acknowledged across rounds.
func fillUp(t *testing.T, db *sqlite.DB, st *sqlite.EventStore, round int, acked map[factum.AggregateID][]string) {
	t.Helper()
	ctx := context.Background()
	// The writer pool holds exactly one connection, so the pragma applies
	// to every write.
	budget := pragmaInt(t, db, "page_count") + 40
	if _, err := db.Writer().Exec(fmt.Sprintf("PRAGMA max_page_count = %d", budget)); err != nil {
		t.Fatal(err)
	}
	const writers = 8
	var (
		mu       sync.Mutex
		failures int
		first    error
		wg       sync.WaitGroup
		before   = 0
	)
	for _, rids := range acked {
		before += len(rids)
	}
	for w := range writers {
		wg.Go(func() {
			id := fullCart.WithID(fmt.Sprintf("full-%d", w))
			for {
				mu.Lock()
				v := len(acked[id]) + 1
				mu.Unlock()
				rid := fmt.Sprintf("r%d-w%d-%d", round, w, v)
				err := st.Append(ctx, bigStream(id, v, rid))
				mu.Lock()
				if err == nil {
					acked[id] = append(acked[id], rid)
					mu.Unlock()
					continue
				}
				failures++
				if first == nil {
					first = err
				}
				mu.Unlock()
				if !isFull(err) {
					t.Errorf("round %d writer %d version %d: %v, want a database-full error", round, w, v, err)
				}
				for _, sentinel := range []error{factum.ErrDuplicateRequestID, factum.ErrEventVersionConflict, factum.ErrDuplicateAggregateID} {
					if errors.Is(err, sentinel) {
						t.Errorf("out of space reported as %v: a caller would think another intent won", sentinel)
					}
				}
				return
			}
		})
	}
	wg.Wait()
	if failures != writers {
		t.Fatalf("round %d: %d writers failed, want all %d", round, failures, writers)
	}
	if got := pragmaInt(t, db, "max_page_count"); got != budget {
		t.Fatalf("max_page_count is %d, want %d: the writer's connection was replaced, the test proves nothing", got, budget)
	}
	total := 0
	for id, rids := range acked {
		storedAsAcked(t, st, round, id, rids)
		total += len(rids)
	}
	t.Logf("round %d: %d appends acknowledged until the database was full (%d in all); first failure: %v", round, total-before, total, first)
	integrityOK(t, db)

	// Room again: the same store goes on where it stopped.
	if _, err := db.Writer().Exec("PRAGMA max_page_count = 1073741823"); err != nil {
		t.Fatal(err)
	}
	for id, rids := range acked {
		rid := fmt.Sprintf("r%d-after", round)
		if err := st.Append(ctx, bigStream(id, len(rids)+1, rid)); err != nil {
			t.Fatalf("%s: append after space came back: %v", id, err)
		}
		acked[id] = append(acked[id], rid)
	}
	integrityOK(t, db)
}

// storedAsAcked fails unless id holds what round's appends and those
// before it acknowledged: version i+1 with the request acked[i], and no
// more.
func storedAsAcked(t *testing.T, st *sqlite.EventStore, round int, id factum.AggregateID, acked []string) {
	t.Helper()
	streams, err := st.Load(context.Background(), id, 1, eventstore.MaxVersion)
	if err != nil {
		t.Fatal(err)
	}
	if len(streams) != len(acked) {
		t.Errorf("round %d: %s: %d streams stored, %d acknowledged", round, id, len(streams), len(acked))
	}
	for i, s := range streams {
		if i < len(acked) && (s.Version != i+1 || s.RequestID != acked[i]) {
			t.Errorf("round %d: %s: stream %d is version %d request %s, acknowledged request %s", round, id, i, s.Version, s.RequestID, acked[i])
		}
	}
}

func isFull(err error) bool {
	s := strings.ToLower(err.Error())
	return strings.Contains(s, "full")
}

// mountTmpfs mounts a tmpfs of size bytes on a fresh directory and
// unmounts it at cleanup; it skips the test where mounting is not allowed
// (not root, or a sandbox without the capability): the max_page_count test
// above covers the same error everywhere.
func mountTmpfs(t *testing.T, size int) string {
	t.Helper()
	dir := t.TempDir()
	out, err := exec.Command("mount", "-t", "tmpfs", "-o", fmt.Sprintf("size=%d", size), "tmpfs", dir).CombinedOutput()
	if err != nil {
		t.Skipf("cannot mount a tmpfs here (%v: %s); TestEventStoreOutOfSpace covers SQLITE_FULL", err, bytes.TrimSpace(out))
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v %s", dir, err, out)
		}
	})
	return dir
}

// A real full disk: the database on a 4 MiB tmpfs whose free space filler
// files take, so appends run into ENOSPC. Three rounds: appends fail with
// a database-full error, nothing acknowledged is lost, integrity_check is
// ok, and after a filler is deleted the same store appends again.
func TestEventStoreDiskFull(t *testing.T) {
	dir := mountTmpfs(t, 4<<20)
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(dir, "full.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	st, err := sqlite.NewEventStore(ctx, db, "shop", sqlite.EventStoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close(); db.Close() }) // before the unmount (cleanups run last first)
	// Fill the rest of the file system with 256 KiB fillers.
	var fillers []string
	for i := 0; ; i++ {
		name := filepath.Join(dir, fmt.Sprintf("filler-%d", i))
		if err := os.WriteFile(name, make([]byte, 256<<10), 0o600); err != nil {
			os.Remove(name)
			break
		}
		fillers = append(fillers, name)
	}
	if len(fillers) < 4 {
		t.Fatalf("only %d fillers fit", len(fillers))
	}
	id := fullCart.WithID("disk")
	var acked []string
	for round := range 3 {
		failed := false
		for n := 0; n < 10000; n++ {
			rid := fmt.Sprintf("r%d-%d", round, n)
			err := st.Append(ctx, bigStream(id, len(acked)+1, rid))
			if err == nil {
				acked = append(acked, rid)
				continue
			}
			if !isFull(err) {
				t.Fatalf("round %d: %v, want a database-full error", round, err)
			}
			for _, sentinel := range []error{factum.ErrDuplicateRequestID, factum.ErrEventVersionConflict, factum.ErrDuplicateAggregateID} {
				if errors.Is(err, sentinel) {
					t.Fatalf("disk full reported as %v", sentinel)
				}
			}
			t.Logf("round %d: %d appends acknowledged in all; then: %v", round, len(acked), err)
			failed = true
			break
		}
		if !failed {
			t.Fatalf("round %d: the disk never filled", round)
		}
		storedAsAcked(t, st, round, id, acked)
		integrityOK(t, db)
		// Room again.
		if err := os.Remove(fillers[len(fillers)-1]); err != nil {
			t.Fatal(err)
		}
		fillers = fillers[:len(fillers)-1]
		rid := fmt.Sprintf("r%d-after", round)
		if err := st.Append(ctx, bigStream(id, len(acked)+1, rid)); err != nil {
			t.Fatalf("round %d: append after space came back: %v", round, err)
		}
		acked = append(acked, rid)
	}
}
