package nats

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/engine"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/internal/servicetest"
	"github.com/factum-go/factum/postgres"
)

// benchWorld is a world on the machine's server when FACTUM_NATS_URL is
// set, on a server in process otherwise.
func benchWorld(b *testing.B) *world {
	if os.Getenv("FACTUM_NATS_URL") != "" {
		return sharedWorld(b, DefaultPartitions, DefaultLease)
	}
	return inProcessWorld(b, DefaultPartitions, DefaultLease)
}

// benchFleet returns a fleet for a benchmark: without the probe, and with
// the signals of each instance on NATS, as factum serve's are.
func benchFleet(b *testing.B, local LocalMode) *fleet {
	f := newFleet(b, benchWorld(b), local)
	f.noProbe, f.natsSignals = true, true
	return f
}

// BenchmarkCommands measures commands per second and the latency at
// PROCESSED, on a memory store, of: today's path (one instance, the
// in-process dispatcher); one instance on the NATS bus owning every
// partition (LocalFirst); the same with every command through JetStream
// (LocalNever); and two and three instances, commands sent through the
// first, so that a half and two thirds of them cross to another instance.
// "today-origin" is today's path with every command carrying an origin
// header, as every command on the NATS bus does: the difference to
// "today" is what the header costs the store, the rest of "all-local"'s is
// the bus's. Run the cases in one run and compare ratios: the machine is
// shared.
func BenchmarkCommands(b *testing.B) {
	for _, clients := range []int{1, 16} {
		b.Run(fmt.Sprintf("clients=%d", clients), func(b *testing.B) {
			for _, tc := range []struct {
				name   string
				header map[string]string
			}{{"today", nil}, {"today-origin", map[string]string{HeaderOrigin: "i0"}}} {
				b.Run(tc.name, func(b *testing.B) {
					var e gatewayer = todayEngine(b, eventstore.NewMemory())
					if tc.header != nil {
						e = withHeader{e.(*engine.Engine), tc.header}
					}
					benchSend(b, clients, e, nil)
				})
			}
			for _, tc := range []struct {
				name      string
				instances int
				local     LocalMode
			}{
				{"all-local", 1, LocalFirst},
				{"all-jetstream", 1, LocalNever},
				{"crossing-2", 2, LocalFirst},
				{"crossing-3", 3, LocalFirst},
			} {
				b.Run(tc.name, func(b *testing.B) {
					f := benchFleet(b, tc.local)
					var first *engine.Engine
					for i := range tc.instances {
						e := f.start(fmt.Sprintf("i%d", i))
						if i == 0 {
							first = e
						}
					}
					f.balanced()
					benchSend(b, clients, first, func(id string) bool { return f.owner(id) != "i0" })
				})
			}
		})
	}
}

// cpuTime returns the CPU time this process has used, every thread.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchSend sends b.N commands through e from clients goroutines, over
// 256 aggregates, each waiting for PROCESSED, and reports commands/s, the
// p50 and p99 latencies and the share of commands that crossed.
func benchSend(b *testing.B, clients int, e gatewayer, crosses func(id string) bool) {
	const aggregates = 256
	ids := make([]string, aggregates)
	crossing := 0
	for i := range ids {
		ids[i] = fmt.Sprintf("agg-%d", i)
		if crosses != nil && crosses(ids[i]) {
			crossing++
		}
	}
	named := factum.NamedAggregate{Context: "shop", Aggregate: "tally"}
	lat := make([]time.Duration, b.N)
	var next atomic.Int64
	var failed atomic.Value
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuTime()
	start := time.Now()
	var wg sync.WaitGroup
	for range clients {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= b.N {
					return
				}
				cmd := factum.NewCommand(named.WithID(ids[i%aggregates]), addN{N: 1})
				if h, ok := e.(withHeader); ok {
					cmd.Header = h.header
				}
				t0 := time.Now()
				if _, err := e.Gateway().SendAndWait(context.Background(), cmd, command.Wait(factum.StageProcessed)); err != nil {
					failed.Store(err)
					return
				}
				lat[i] = time.Since(t0)
			}
		})
	}
	wg.Wait()
	endTimed(b, start, cpu0, &failed, float64(b.N), "cpu-ns/op", lat)
	b.ReportMetric(100*float64(crossing)/aggregates, "crossing-%")
}

// endTimed ends the timed part of a benchmark begun at start, when the
// process had used cpu0: it fails the benchmark with the error failed
// holds, if any, and reports ops per second as cmd/s, the CPU time of one
// op under cpuUnit, and the p50 and p99 of lat (sorted here).
func endTimed(b *testing.B, start time.Time, cpu0 time.Duration, failed *atomic.Value, ops float64, cpuUnit string, lat []time.Duration) {
	b.Helper()
	elapsed := time.Since(start)
	cpu := cpuTime() - cpu0
	b.StopTimer()
	if err, _ := failed.Load().(error); err != nil {
		b.Fatal(err)
	}
	slices.Sort(lat)
	b.ReportMetric(ops/elapsed.Seconds(), "cmd/s")
	b.ReportMetric(float64(cpu.Nanoseconds())/ops, cpuUnit)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
}

// gatewayer is an engine as the benchmarks send through it.
type gatewayer interface{ Gateway() *command.Gateway }

// withHeader is an engine whose benchmark commands carry header, one map
// shared by all of them (as the bus's origin map is).
type withHeader struct {
	*engine.Engine
	header map[string]string
}

// todayEngine starts today's path: one instance, the in-process
// dispatcher, on store.
func todayEngine(b *testing.B, store eventstore.Store) *engine.Engine {
	b.Helper()
	e, err := engine.New(engine.Config{Store: store}, tallyType("shop"))
	if err != nil {
		b.Fatal(err)
	}
	if err := e.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = e.Shutdown(context.Background()) })
	return e
}

// BenchmarkContendedAggregate sends 2×200 concurrent commands to one
// aggregate, each waiting for PROCESSED, per round (one op): through one
// instance on the in-process dispatcher (today), through one instance on
// the NATS bus owning every partition, and 200 through each of two
// instances on the NATS bus, so that half of them cross to the owner. It
// reports the round's commands/s, the p50 and p99 latencies of its
// commands, the CPU per command and the event store's version conflicts
// per round: zero means one writer, no retry storm, and the round's
// admission, writer and tail spans (see anatomy). "paired" runs one
// round on one instance and one on two per op, in turns, each fleet on a
// store of its own, and reports both rates and two÷one: rounds side by
// side see the same load, where separate cases see the load of their own
// seconds. It runs on a memory event store and on PostgreSQL (in a
// schema of its own; skipped unless FACTUM_POSTGRES_URL is set). Run the
// cases in one run and compare ratios: the machine is shared.
func BenchmarkContendedAggregate(b *testing.B) {
	for _, backend := range []string{"memory", "postgresql"} {
		b.Run(backend, func(b *testing.B) {
			b.Run("one-instance-today", func(b *testing.B) {
				store := &countingStore{Store: contendedStore(b, backend)}
				e := todayEngine(b, store)
				benchContended(b, store, nil, e, e)
			})
			for _, tc := range []struct {
				name      string
				instances int
			}{{"one-instance-nats", 1}, {"two-instances", 2}} {
				b.Run(tc.name, func(b *testing.B) {
					f := benchFleet(b, LocalFirst)
					f.store = &countingStore{Store: contendedStore(b, backend)}
					var es []gatewayer
					for i := range tc.instances {
						es = append(es, f.start(fmt.Sprintf("i%d", i)))
					}
					f.balanced()
					if len(es) == 1 {
						es = append(es, es[0])
					}
					benchContended(b, f.store, f, es[0], es[1])
				})
			}
			b.Run("paired", func(b *testing.B) {
				var one, two [2]gatewayer
				var stores [2]*countingStore
				for i, k := range []int{1, 2} {
					f := benchFleet(b, LocalFirst)
					f.store = &countingStore{Store: contendedStore(b, backend)}
					stores[i] = f.store
					for j := range k {
						two[j] = f.start(fmt.Sprintf("i%d", j))
					}
					f.balanced()
					if i == 0 {
						one = [2]gatewayer{two[0], two[0]}
					}
				}
				benchPaired(b, stores, one, two)
			})
		})
	}
}

// benchPaired runs b.N pairs of contended rounds, one through one (one
// instance: both of its gateways are that instance's) and one through two
// (two instances), the first of each pair taking turns, and reports the
// commands/s of each and their ratio, two÷one, and the appends each
// fleet's store was asked for per round (stores: one's, two's): a run of
// commands is one append, so fewer appends mean larger runs. It also
// reports where each fleet's rounds went (see anatomy).
func benchPaired(b *testing.B, stores [2]*countingStore, one, two [2]gatewayer) {
	commits0 := [2]int64{stores[0].commits.Load(), stores[1].commits.Load()}
	var took [2]time.Duration
	var spans [2]anatomy
	for _, s := range stores {
		s.window.take()
	}
	b.ResetTimer()
	for i := range b.N {
		for k := range 2 {
			at := (i + k) % 2 // 0: one, 1: two
			gw := one
			if at == 1 {
				gw = two
			}
			d, err := contendedRound(gw[0], gw[1], nil, nil)
			if err != nil {
				b.Fatal(err)
			}
			end := time.Now()
			spans[at].add(end.Add(-d), end, &stores[at].window)
			took[at] += d
		}
	}
	b.StopTimer()
	cmds := float64(b.N * 2 * contendedPer)
	b.ReportMetric(cmds/took[0].Seconds(), "one-cmd/s")
	b.ReportMetric(cmds/took[1].Seconds(), "two-cmd/s")
	b.ReportMetric(took[0].Seconds()/took[1].Seconds(), "two÷one")
	b.ReportMetric(float64(stores[0].commits.Load()-commits0[0])/float64(b.N), "one-appends/op")
	b.ReportMetric(float64(stores[1].commits.Load()-commits0[1])/float64(b.N), "two-appends/op")
	spans[0].report(b, "one-")
	spans[1].report(b, "two-")
}

// contendedPer is how many commands each gateway of a contended round
// sends.
const contendedPer = 200

// contendedRound sends contendedPer concurrent commands through each of a
// and c to one aggregate, each waiting for PROCESSED, and returns how long
// the round took; with mu set, each command's latency is appended to lat.
func contendedRound(a, c gatewayer, mu *sync.Mutex, lat *[]time.Duration) (time.Duration, error) {
	id := factum.NamedAggregate{Context: "shop", Aggregate: "tally"}.WithID("hot")
	var failed atomic.Value
	var wg sync.WaitGroup
	start := time.Now()
	for _, e := range []gatewayer{a, c} {
		for range contendedPer {
			wg.Go(func() {
				cmd := factum.NewCommand(id, addN{N: 1})
				t0 := time.Now()
				if _, err := e.Gateway().SendAndWait(context.Background(), cmd, command.Wait(factum.StageProcessed)); err != nil {
					failed.Store(err)
					return
				}
				if mu != nil {
					d := time.Since(t0)
					mu.Lock()
					*lat = append(*lat, d)
					mu.Unlock()
				}
			})
		}
	}
	wg.Wait()
	took := time.Since(start)
	err, _ := failed.Load().(error)
	return took, err
}

// contendedStore returns a fresh event store of the context shop on
// backend: memory, or PostgreSQL in a schema of its own, which skips the
// benchmark unless FACTUM_POSTGRES_URL names a server.
func contendedStore(b *testing.B, backend string) eventstore.Store {
	b.Helper()
	if backend == "memory" {
		return eventstore.NewMemory()
	}
	if os.Getenv(servicetest.PostgresEnv) == "" {
		b.Skipf("PostgreSQL: set %s to run this case", servicetest.PostgresEnv)
	}
	ctx := context.Background()
	url, schema := servicetest.PostgresSchema(b)
	db, err := postgres.Open(ctx, url, postgres.Options{Schema: schema})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(db.Close)
	store, err := postgres.NewEventStore(ctx, db, "shop", postgres.EventStoreOptions{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = store.Close() })
	return store
}

// benchContended runs b.N contended rounds through a and c, and reports
// the NATS messages f's instances sent and received per command when f
// is not nil.
func benchContended(b *testing.B, store *countingStore, f *fleet, a, c gatewayer) {
	msgs0 := f.messages()
	lat := make([]time.Duration, 0, b.N*2*contendedPer)
	var mu sync.Mutex
	var failed atomic.Value
	conflicts0 := store.conflicts.Load()
	var spans anatomy
	store.window.take()
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuTime()
	start := time.Now()
	for range b.N {
		d, err := contendedRound(a, c, &mu, &lat)
		if err != nil {
			failed.Store(err)
			break
		}
		end := time.Now()
		spans.add(end.Add(-d), end, &store.window)
	}
	endTimed(b, start, cpu0, &failed, float64(b.N*2*contendedPer), "cpu-ns/cmd", lat)
	spans.report(b, "")
	b.ReportMetric(float64(store.conflicts.Load()-conflicts0)/float64(b.N), "conflicts/op")
	if f != nil {
		b.ReportMetric(float64(f.messages()-msgs0)/float64(b.N*2*contendedPer), "nats-msgs/cmd")
	}
}

// messages returns how many messages the connections of f's instances
// have sent and received; 0 for a nil fleet.
func (f *fleet) messages() uint64 {
	if f == nil {
		return 0
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var n uint64
	for _, nd := range f.nodes {
		st := nd.nc.Stats()
		n += st.InMsgs + st.OutMsgs
	}
	return n
}

// handOff is an executor that does nothing and a sink that reports each
// signal on a channel: what is left of a command's way is the bus's.
type handOff chan struct{}

func (h handOff) Process(_ context.Context, cmd *factum.Command) factum.Signal {
	return factum.Signal{CommandID: cmd.ID, Stage: factum.StageProcessed, AggregateID: cmd.AggregateID}
}

func (h handOff) Signal(factum.Signal) { h <- struct{}{} }

// BenchmarkHandOff measures the bus alone, one command at a time over 256
// aggregates: Send, the lane, an executor that does nothing, the PROCESSED
// signal. "dispatcher" is the in-process dispatcher; "all-local" the NATS
// bus owning the partition (LocalFirst), with the claim and lease checks
// and the origin header.
func BenchmarkHandOff(b *testing.B) {
	named := factum.NamedAggregate{Context: "shop", Aggregate: "tally"}
	cmds := make([]factum.Command, 256)
	for i := range cmds {
		cmds[i] = factum.Command{ID: fmt.Sprintf("cmd-%d", i), AggregateID: named.WithID(fmt.Sprintf("agg-%d", i)), Name: "add_n", IsCreate: true}
	}
	run := func(b *testing.B, bus command.Bus, done handOff) {
		b.ReportAllocs()
		b.ResetTimer()
		cpu0 := cpuTime()
		for i := range b.N {
			cmd := cmds[i%len(cmds)]
			if err := bus.Send(context.Background(), &cmd); err != nil {
				b.Fatal(err)
			}
			<-done
		}
		b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
	}
	b.Run("dispatcher", func(b *testing.B) {
		done := make(handOff, 1)
		d, err := command.NewDispatcher(done, done, command.DispatcherConfig{Lanes: 16})
		if err != nil {
			b.Fatal(err)
		}
		d.Start(context.Background())
		b.Cleanup(func() { _ = d.Shutdown(context.Background()) })
		run(b, d, done)
	})
	b.Run("all-local", func(b *testing.B) {
		done := make(handOff, 1)
		n := benchWorld(b).node(b, "a", BusConfig{Lanes: 16})
		run(b, n.startBus(b, done, done), done)
	})
}
