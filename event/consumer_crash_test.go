package event_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/sqlite"
)

// crashChildEnv carries the database and output paths to the child
// process of TestConsumerKilledRedeliversAndSkipsNothing.
const crashChildEnv = "FACTUM_EVENT_CRASH_CHILD"

// crashEvery is the child's CheckpointStreams: it saves once per this many
// streams (rounded up to its reads of 16), so a kill lands between saves.
const crashEvery = 40

// A consumer killed with SIGKILL between two batched checkpoint saves
// loses only its unsaved position: restarted, it delivers again the
// streams after the saved checkpoint (at least once) and skips none, and
// the saved checkpoint never passed a stream the killed process had not
// handled. The consumer runs in a child process over SQLite; its function
// writes each stream's ID to a file before it returns.
func TestConsumerKilledRedeliversAndSkipsNothing(t *testing.T) {
	if env := os.Getenv(crashChildEnv); env != "" {
		runCrashChild(t, env)
		return
	}
	if testing.Short() {
		t.Skip("runs a child process twice")
	}
	dir := t.TempDir()
	dbPath, out := filepath.Join(dir, "crash.db"), filepath.Join(dir, "handled.txt")
	ctx := context.Background()
	const streams = 300
	func() {
		db, es := openCrashStores(t, dbPath)
		defer db.Close()
		defer es.Close()
		for i := range streams {
			s := factum.EventStream{ID: factum.NewID(), AggregateID: carts.WithID(fmt.Sprintf("c-%d", i%7)), Version: i/7 + 1,
				CommandID: factum.NewID(), RequestID: factum.NewID(), CreateTime: time.Now(),
				Events: []factum.DomainEvent{{ID: factum.NewID(), Name: "item_added", Sequence: 1, IsLast: true, Body: json.RawMessage(`{"sku":"x"}`)}}}
			if err := es.Append(ctx, &s); err != nil {
				t.Fatal(err)
			}
		}
	}()

	// The first run is killed once it has handled a good part of the log.
	runChildUntil(t, dbPath, out, func(lines []string) bool { return len(lines) >= 3*crashEvery+crashEvery/2 })
	firstRun := readLines(t, out)

	db, es := openCrashStores(t, dbPath)
	cps, err := sqlite.NewCheckpointStore(ctx, db, "shop")
	if err != nil {
		t.Fatal(err)
	}
	saved, err := cps.Checkpoint(ctx, factum.Function{Context: "shop", Processor: "crash"})
	if err != nil {
		t.Fatal(err)
	}
	log, err := es.ReadLog(ctx, factum.Position{}, 1000)
	if err != nil || len(log) != streams {
		t.Fatalf("log: %d streams, %v", len(log), err)
	}
	es.Close()
	db.Close()
	handled := map[string]int{}
	for _, id := range firstRun {
		handled[id]++
	}
	savedCount := 0
	for _, s := range log {
		if saved.Less(s.Position) {
			break
		}
		savedCount++
		if handled[s.ID] == 0 {
			t.Errorf("the checkpoint %s passed stream %s, which the killed run never handled", saved, s.ID)
		}
	}
	t.Logf("killed after %d streams handled; checkpoint at %d", len(firstRun), savedCount)
	if savedCount < crashEvery {
		t.Errorf("checkpoint at %d streams, want at least %d", savedCount, crashEvery)
	}

	// The second run finishes the log.
	runChildUntil(t, dbPath, out, func(lines []string) bool {
		seen := map[string]bool{}
		for _, id := range lines {
			seen[id] = true
		}
		return len(seen) == streams
	})
	all := readLines(t, out)
	second := all[len(firstRun):]
	if len(second) == 0 || second[0] != log[savedCount].ID {
		t.Errorf("the restarted run began at %v, want the stream after the checkpoint, %s", second[:min(1, len(second))], log[savedCount].ID)
	}
	count := map[string]int{}
	for _, id := range all {
		count[id]++
	}
	for i, s := range log {
		switch n := count[s.ID]; {
		case n == 0:
			t.Errorf("stream %d (%s) was skipped", i, s.ID)
		case n > 1 && i < savedCount:
			t.Errorf("stream %d (%s), before the checkpoint, was delivered %d times", i, s.ID, n)
		case n > 2:
			t.Errorf("stream %d (%s) was delivered %d times", i, s.ID, n)
		}
	}
}

func openCrashStores(t *testing.T, path string) (*sqlite.DB, *sqlite.EventStore) {
	t.Helper()
	ctx := context.Background()
	db, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	es, err := sqlite.NewEventStore(ctx, db, "shop", sqlite.EventStoreOptions{})
	if err != nil {
		db.Close()
		t.Fatal(err)
	}
	return db, es
}

// runChildUntil runs this test as a child process consuming the log of
// the database at dbPath and kills it with SIGKILL once enough holds for
// the stream IDs written to out.
func runChildUntil(t *testing.T, dbPath, out string, enough func([]string) bool) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run", "^TestConsumerKilledRedeliversAndSkipsNothing$", "-test.count", "1")
	cmd.Env = append(os.Environ(), crashChildEnv+"="+dbPath+string(os.PathListSeparator)+out)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	deadline := time.Now().Add(60 * time.Second)
	for {
		select {
		case err := <-exited:
			t.Fatalf("the child exited early: %v\n%s", err, stderr.String())
		case <-time.After(2 * time.Millisecond):
		}
		if enough(readLines(t, out)) {
			break
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			<-exited
			t.Fatalf("the child did not get far enough in time\n%s", stderr.String())
		}
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-exited
}

func readLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	return lines[:len(lines)-1] // the last is empty or not yet complete
}

// runCrashChild consumes the log until the parent kills it.
func runCrashChild(t *testing.T, env string) {
	dbPath, out, _ := strings.Cut(env, string(os.PathListSeparator))
	ctx := context.Background()
	db, es := openCrashStores(t, dbPath)
	cps, err := sqlite.NewCheckpointStore(ctx, db, "shop")
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(out, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	p := event.MustProcessor("shop", "crash", factum.StageProjected,
		event.On(func(ctx context.Context, m event.Message, e ItemAdded) error {
			if _, err := f.WriteString(m.Stream.ID + "\n"); err != nil {
				return err
			}
			time.Sleep(2 * time.Millisecond)
			return nil
		}))
	c, err := event.NewConsumer(p, event.Config{Log: es, Checkpoints: cps, BatchSize: 16,
		CheckpointStreams: crashEvery, CheckpointInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	_ = c.Run(ctx) // until killed
}
