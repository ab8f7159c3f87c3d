package nats

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/aggregate"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/engine"
	"github.com/factum-go/factum/eventstore"
)

// BenchmarkContendedLane is BenchmarkContendedAggregate's paired case
// with the owner's lane traced, to tell where a two-instance round loses
// time against a one-instance round. Per setup ("one", "two") it reports:
//
//   - span-ms: the round;
//   - busy-%: the share of the round the lane spends processing (the
//     executor, the append included);
//   - between-%: the lane between two commands with more queued (the
//     acknowledgement, the signal, the next job);
//   - waiting-%: the lane between two commands with none queued, waiting
//     for one to arrive;
//   - head-ms, tail-ms: round start to the first command, last command to
//     the round's end (the signal to its waiter);
//   - append-us: the mean append; first100-ms: round start to the 100th
//     append's end, the part of the round the crossing commands travel
//     in; rest-ms: the remainder;
//   - cpu-us/cmd: this process's CPU per command (the other fleet idles);
//   - two only: lastpull-ms, when the owner's consumer received the last
//     crossing command, and stored-p50-ms, the other instance's sends
//     until JetStream stored them.
//
// The rounds take turns as in benchPaired.
func BenchmarkContendedLane(b *testing.B) {
	for _, backend := range []string{"memory", "postgresql"} {
		b.Run(backend, func(b *testing.B) {
			var trs [2]*laneTrace
			var gws [2][2]gatewayer
			for i, k := range []int{1, 2} {
				trs[i] = &laneTrace{bus: map[string]*Bus{}}
				gws[i] = traceFleet(b, backend, k, trs[i])
			}
			var sum [2]laneStats
			b.ResetTimer()
			for i := range b.N {
				for k := range 2 {
					at := (i + k) % 2
					trs[at].reset()
					cpu0 := cpuTime()
					if _, err := contendedRound(gws[at][0], gws[at][1], nil, nil); err != nil {
						b.Fatal(err)
					}
					s := trs[at].stats(time.Now())
					s.cpu = cpuTime() - cpu0
					sum[at].add(s)
				}
			}
			b.StopTimer()
			for at, name := range []string{"one", "two"} {
				sum[at].report(b, name, at == 1)
			}
			b.ReportMetric(sum[0].span.Seconds()/sum[1].span.Seconds(), "two÷one")
		})
	}
}

// laneTrace records a contended round on the hot aggregate's owner: each
// command's processing and append, when its consumer received each
// crossing command, and how long the other instance's sends took.
type laneTrace struct {
	bus   map[string]*Bus // by instance, set while the fleet starts
	owner string          // the hot aggregate's, set once the fleet is balanced

	mu      sync.Mutex
	started time.Time
	procs   []procSpan
	appends []span
	pulls   []time.Time
	stored  []time.Duration
}

type span struct{ start, end time.Time }

type procSpan struct {
	span
	queued int // jobs in the lane as the command ended
}

func (tr *laneTrace) reset() {
	tr.mu.Lock()
	tr.procs, tr.appends, tr.pulls, tr.stored = tr.procs[:0], tr.appends[:0], tr.pulls[:0], tr.stored[:0]
	tr.started = time.Now()
	tr.mu.Unlock()
}

// middleware times the processing of each command of the instance.
func (tr *laneTrace) middleware(instance string) aggregate.Middleware {
	return func(_ factum.NamedAggregate, next aggregate.CommandFunc) aggregate.CommandFunc {
		return func(ctx context.Context, cmd *factum.Command) factum.Signal {
			t0 := time.Now()
			s := next(ctx, cmd)
			t1 := time.Now()
			q := len(tr.bus[instance].laneOf(&cmd.AggregateID).q)
			tr.mu.Lock()
			tr.procs = append(tr.procs, procSpan{span: span{t0, t1}, queued: q})
			tr.mu.Unlock()
			return s
		}
	}
}

// laneStats sums rounds (see BenchmarkContendedLane).
type laneStats struct {
	rounds                                   int
	span, busy, between, waiting, head, tail time.Duration
	append, first100, cpu                    time.Duration
	appends, cmds                            int
	lastPull, storedP50                      time.Duration
}

func (tr *laneTrace) stats(end time.Time) laneStats {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	s := laneStats{rounds: 1, span: end.Sub(tr.started), cmds: 2 * contendedPer}
	p := tr.procs
	if len(p) == 0 {
		return s
	}
	s.head, s.tail = p[0].start.Sub(tr.started), end.Sub(p[len(p)-1].end)
	for i, x := range p {
		s.busy += x.end.Sub(x.start)
		if i+1 == len(p) {
			break
		}
		if gap := p[i+1].start.Sub(x.end); x.queued == 0 {
			s.waiting += gap
		} else {
			s.between += gap
		}
	}
	for _, a := range tr.appends {
		s.append += a.end.Sub(a.start)
	}
	s.appends = len(tr.appends)
	if len(tr.appends) >= 100 {
		s.first100 = tr.appends[99].end.Sub(tr.started)
	}
	if len(tr.pulls) > 0 {
		s.lastPull = tr.pulls[len(tr.pulls)-1].Sub(tr.started)
	}
	if len(tr.stored) > 0 {
		st := slices.Clone(tr.stored)
		slices.Sort(st)
		s.storedP50 = st[len(st)/2]
	}
	return s
}

func (a *laneStats) add(s laneStats) {
	a.rounds += s.rounds
	a.span += s.span
	a.busy += s.busy
	a.between += s.between
	a.waiting += s.waiting
	a.head += s.head
	a.tail += s.tail
	a.append += s.append
	a.appends += s.appends
	a.first100 += s.first100
	a.cpu += s.cpu
	a.cmds += s.cmds
	a.lastPull += s.lastPull
	a.storedP50 += s.storedP50
}

func (a *laneStats) report(b *testing.B, name string, crossing bool) {
	pct := func(d time.Duration) float64 { return 100 * d.Seconds() / a.span.Seconds() }
	ms := func(d time.Duration) float64 { return d.Seconds() * 1000 / float64(a.rounds) }
	b.ReportMetric(ms(a.span), name+"-span-ms")
	b.ReportMetric(pct(a.busy), name+"-busy-%")
	b.ReportMetric(pct(a.between), name+"-between-%")
	b.ReportMetric(pct(a.waiting), name+"-waiting-%")
	b.ReportMetric(ms(a.head), name+"-head-ms")
	b.ReportMetric(ms(a.tail), name+"-tail-ms")
	if a.appends > 0 {
		b.ReportMetric(float64(a.append.Microseconds())/float64(a.appends), name+"-append-us")
	}
	b.ReportMetric(ms(a.first100), name+"-first100-ms")
	b.ReportMetric(ms(a.span-a.first100), name+"-rest-ms")
	b.ReportMetric(float64(a.cpu.Microseconds())/float64(a.cmds), name+"-cpu-us/cmd")
	if crossing {
		b.ReportMetric(ms(a.lastPull), name+"-lastpull-ms")
		b.ReportMetric(ms(a.storedP50), name+"-stored-p50-ms")
	}
}

// traceFleet starts k instances on a fleet and a store of their own,
// traced by tr, and returns the gateways a contended round sends through
// (the one instance's twice when k is 1).
func traceFleet(b *testing.B, backend string, k int, tr *laneTrace) [2]gatewayer {
	b.Helper()
	f := newFleet(b, benchWorld(b), LocalFirst)
	f.store = &countingStore{Store: &timedStore{Store: contendedStore(b, backend), tr: tr}}
	var gw [2]gatewayer
	for j := range k {
		name := fmt.Sprintf("i%d", j)
		n := f.w.nodeAt(b, name, f.w.url, 1, BusConfig{Local: LocalFirst, Lanes: 16})
		e, err := engine.New(engine.Config{
			Store: f.store, Bus: tr.newBus(n), CommandMiddleware: []aggregate.Middleware{tr.middleware(name)},
			Signals: f.router.signals(name),
		}, tallyType(f.w.context))
		if err != nil {
			b.Fatal(err)
		}
		if err := e.Start(context.Background()); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			_ = n.parts.Close(ctx)
			_ = e.Shutdown(ctx)
		})
		f.mu.Lock()
		f.engines[name], f.nodes[name] = e, n
		f.mu.Unlock()
		gw[j] = e
	}
	f.balanced()
	tr.owner = f.owner("hot")
	if k == 1 {
		gw[1] = gw[0]
	}
	return gw
}

// newBus makes node n's bus, noting when its consumers receive a message
// and timing the sends of the instance that does not own the hot
// aggregate.
func (tr *laneTrace) newBus(n *node) engine.NewBus {
	return func(proc command.Executor, sink command.Sink) (engine.Bus, error) {
		eb, err := n.newBus(proc, sink)
		if err != nil {
			return nil, err
		}
		bus := eb.(*Bus)
		bus.hooks = &busHooks{pulled: func(context.Context) bool {
			tr.mu.Lock()
			tr.pulls = append(tr.pulls, time.Now())
			tr.mu.Unlock()
			return true
		}}
		tr.bus[n.name] = bus
		return engine.SendWrapper(func(command.Executor, command.Sink) (engine.Bus, error) { return eb, nil },
			func(next command.Bus) command.Bus { return timedSend{next: next, tr: tr, name: n.name} })(proc, sink)
	}
}

// timedSend times the sends of the instance that does not own the hot
// aggregate: until JetStream stored the command.
type timedSend struct {
	next command.Bus
	tr   *laneTrace
	name string
}

func (t timedSend) Send(ctx context.Context, cmd *factum.Command) error {
	if t.tr.owner == "" || t.tr.owner == t.name {
		return t.next.Send(ctx, cmd)
	}
	t0 := time.Now()
	err := t.next.Send(ctx, cmd)
	d := time.Since(t0)
	t.tr.mu.Lock()
	t.tr.stored = append(t.tr.stored, d)
	t.tr.mu.Unlock()
	return err
}

// timedStore times the appends of a round.
type timedStore struct {
	eventstore.Store
	tr *laneTrace
}

func (s *timedStore) Append(ctx context.Context, st *factum.EventStream) error {
	t0 := time.Now()
	err := s.Store.Append(ctx, st)
	t1 := time.Now()
	s.tr.mu.Lock()
	s.tr.appends = append(s.tr.appends, span{t0, t1})
	s.tr.mu.Unlock()
	return err
}
