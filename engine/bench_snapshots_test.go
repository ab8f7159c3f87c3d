package engine_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/engine"
	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/internal/servicetest"
	"github.com/factum-go/factum/memory"
	"github.com/factum-go/factum/postgres"
	"github.com/factum-go/factum/snapshot"
	"github.com/factum-go/factum/snapshotter"
	"github.com/factum-go/factum/sqlite"
	"github.com/jackc/pgx/v5"
)

// BenchmarkSnapshotter compares the snapshotter saving one snapshot per
// stream (per_stream, a save each) with saving each consumer batch at once
// (per_batch, the default on the SQL stores), in the same run, on memory, SQLite and
// PostgreSQL (when FACTUM_POSTGRES_URL is set): 64 callers over 10,000
// aggregates, waiting for SNAPSHOT, or for PROCESSED while the
// snapshotter keeps up behind them. It reports commands/s, the snapshot
// store's write calls per command (saves/op), on PostgreSQL the commits
// the database counted per command (commits/op), and for PROCESSED the
// snapshotter's lag when the callers stop: the streams it had still to
// save (lag-streams) and how long it took to catch up (catchup-ms).
func BenchmarkSnapshotter(b *testing.B) {
	b.Cleanup(dropBenchDatabase)
	for _, backend := range []string{"memory", "sqlite", "postgres"} {
		for _, stage := range []factum.CommandStage{factum.StageProcessed, factum.StageSnapshot} {
			for _, mode := range []string{"per_stream", "per_batch"} {
				b.Run(fmt.Sprintf("%s/%s/%s", backend, stage, mode), func(b *testing.B) {
					benchSnapshotter(b, backend, stage, mode == "per_stream")
				})
			}
		}
	}
}

// savesCounter counts the write calls that reach a snapshot store and
// keeps its batch fast paths.
type savesCounter struct {
	snapshot.QueryStore
	n atomic.Int64
}

func (s *savesCounter) Save(ctx context.Context, snap snapshot.Snapshot) (bool, error) {
	s.n.Add(1)
	return s.QueryStore.Save(ctx, snap)
}

func (s checkpointedCounter) SaveBatch(ctx context.Context, snaps []snapshot.Snapshot) ([]bool, error) {
	s.n.Add(1)
	return s.QueryStore.(snapshotter.BatchSaver).SaveBatch(ctx, snaps)
}

func (s checkpointedCounter) SaveBatchAt(ctx context.Context, snaps []snapshot.Snapshot, cps event.CheckpointStore, group factum.Function, pos factum.Position) ([]bool, bool, error) {
	s.n.Add(1)
	return s.QueryStore.(snapshotter.CheckpointBatchSaver).SaveBatchAt(ctx, snaps, cps, group, pos)
}

// checkpointedCounter is savesCounter with the SQL stores' fast paths.
type checkpointedCounter struct{ *savesCounter }

// benchPG is a database of the benchmark's own, so that its commit count
// is the benchmark's alone.
var benchPG struct {
	once sync.Once
	url  string // of the database
	name string
	err  error
}

func benchDatabase(b *testing.B) (url, name string) {
	base := servicetest.PostgresURL(b)
	benchPG.once.Do(func() {
		ctx := context.Background()
		conn, err := pgx.Connect(ctx, base)
		if err != nil {
			benchPG.err = err
			return
		}
		defer conn.Close(ctx)
		benchPG.name = "factum_bench_" + strings.ReplaceAll(factum.NewID(), "-", "")[:16]
		if _, err := conn.Exec(ctx, "CREATE DATABASE "+benchPG.name); err != nil {
			benchPG.err = err
			return
		}
		benchPG.url = strings.Replace(base, "/test?", "/"+benchPG.name+"?", 1)
	})
	if benchPG.err != nil {
		b.Fatal(benchPG.err)
	}
	return benchPG.url, benchPG.name
}

// dropBenchDatabase drops the benchmark's database, if it made one.
func dropBenchDatabase() {
	name, url := benchPG.name, benchPG.url
	benchPG.once, benchPG.url, benchPG.name, benchPG.err = sync.Once{}, "", "", nil
	if name == "" {
		return
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, strings.Replace(url, "/"+name+"?", "/test?", 1))
	if err != nil {
		return
	}
	defer conn.Close(ctx)
	_, _ = conn.Exec(ctx, "DROP DATABASE "+name+" WITH (FORCE)")
}

// commits returns the database's committed transactions so far.
func commits(b *testing.B, url, name string) int64 {
	b.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(ctx)
	var n int64
	if err := conn.QueryRow(ctx, "SELECT xact_commit FROM pg_stat_database WHERE datname = $1", name).Scan(&n); err != nil {
		b.Fatal(err)
	}
	return n
}

func benchSnapshotter(b *testing.B, backend string, stage factum.CommandStage, perStream bool) {
	ctx := context.Background()
	var st engine.Storage
	var closeStorage func()
	var pgURL, pgName string
	switch backend {
	case "memory":
		m := memory.New()
		st, closeStorage = m, func() { m.Close() }
	case "sqlite":
		db, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "bench.db"))
		if err != nil {
			b.Fatal(err)
		}
		st, closeStorage = db, func() { db.Close() }
	case "postgres":
		pgURL, pgName = benchDatabase(b)
		schema := "s_" + strings.ReplaceAll(factum.NewID(), "-", "")[:16]
		conn, err := pgx.Connect(ctx, pgURL)
		if err != nil {
			b.Fatal(err)
		}
		_, err = conn.Exec(ctx, "CREATE SCHEMA "+schema)
		conn.Close(ctx)
		if err != nil {
			b.Fatal(err)
		}
		db, err := postgres.Open(ctx, pgURL, postgres.Options{Schema: schema, MaxConns: 16})
		if err != nil {
			b.Fatal(err)
		}
		st, closeStorage = db, func() { db.Close() }
	}
	def := counterType(nil)
	qs, err := st.SnapshotStore(ctx, "test")
	if err != nil {
		b.Fatal(err)
	}
	counter := &savesCounter{QueryStore: qs}
	var store snapshot.QueryStore = counter
	if _, ok := qs.(snapshotter.CheckpointBatchSaver); ok {
		store = checkpointedCounter{counter}
	}
	cfg := engine.Config{Storage: st, SnapshotStore: store}
	if perStream {
		cfg.Snapshotter = snapshotter.NewComponent(snapshotter.ComponentConfig{Saves: snapshotter.SavePerStream})
	} else {
		cfg.Snapshotter = snapshotter.NewComponent(snapshotter.ComponentConfig{Saves: snapshotter.SavePerBatch})
	}
	eng, err := engine.New(cfg, def)
	if err != nil {
		b.Fatal(err)
	}
	if err := eng.Start(ctx); err != nil {
		b.Fatal(err)
	}
	ids := benchIDs(def, "bench-")
	plan := command.Wait(stage)
	var before int64
	if pgName != "" {
		before = commits(b, pgURL, pgName)
	}
	b.ReportAllocs()
	b.ResetTimer()
	cpu := startCPU()
	runCallers(b, benchCallers, func(i uint64) error {
		_, err := eng.Gateway().SendAndWait(ctx, factum.NewCommand(ids[i%benchAggregates], Add{N: 1}), plan)
		return err
	})
	b.StopTimer()
	cpu.reportCommands(b)
	if stage == factum.StageProcessed {
		behind, took := catchUp(b, st)
		b.ReportMetric(float64(behind), "lag-streams")
		b.ReportMetric(float64(took.Milliseconds()), "catchup-ms")
	}
	if err := eng.Shutdown(ctx); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(counter.n.Load())/float64(b.N), "saves/op")
	closeStorage()
	if pgName != "" {
		time.Sleep(200 * time.Millisecond) // the closed connections' statistics
		b.ReportMetric(float64(commits(b, pgURL, pgName)-before)/float64(b.N), "commits/op")
	}
}

// catchUp returns how many streams the snapshotter had still to handle
// and how long it took to handle them.
func catchUp(b *testing.B, st engine.Storage) (int, time.Duration) {
	b.Helper()
	ctx := context.Background()
	es, err := st.EventStore(ctx, "test")
	if err != nil {
		b.Fatal(err)
	}
	cps, err := st.CheckpointStore(ctx, "test")
	if err != nil {
		b.Fatal(err)
	}
	group := factum.Function{Context: "test", Processor: engine.SnapshotProcessor}
	start := time.Now()
	pos, err := cps.Checkpoint(ctx, group)
	if err != nil {
		b.Fatal(err)
	}
	behind := 0
	end := pos
	for {
		page, err := es.ReadLog(ctx, end, 1000)
		if err != nil {
			b.Fatal(err)
		}
		if len(page) == 0 {
			break
		}
		behind += len(page)
		end = page[len(page)-1].Position
	}
	for {
		pos, err := cps.Checkpoint(ctx, group)
		if err != nil {
			b.Fatal(err)
		}
		if !pos.Less(end) {
			return behind, time.Since(start)
		}
		time.Sleep(time.Millisecond)
	}
}
