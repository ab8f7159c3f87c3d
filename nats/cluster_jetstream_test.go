package nats

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/engine"
	"github.com/factum-go/factum/eventstore"
	"github.com/nats-io/nats-server/v2/server"
	natsgo "github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// jsCluster is a three-node JetStream cluster run in process, each node
// with its own storage, on ports of its own.
type jsCluster struct {
	t       testing.TB
	servers []*server.Server
	down    []bool
}

// freePort returns a TCP port free on the loopback interface now.
func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startJSCluster starts three routed JetStream servers and waits until
// JetStream has a meta leader, so that replicated streams can be made.
func startJSCluster(t testing.TB) *jsCluster {
	t.Helper()
	const size = 3
	routes := make([]*url.URL, size)
	ports := make([]int, size)
	for i := range size {
		ports[i] = freePort(t)
		routes[i] = &url.URL{Scheme: "nats-route", Host: fmt.Sprintf("127.0.0.1:%d", ports[i])}
	}
	c := &jsCluster{t: t, servers: make([]*server.Server, size), down: make([]bool, size)}
	for i := range size {
		s, err := server.NewServer(&server.Options{
			ServerName: fmt.Sprintf("n%d", i), Host: "127.0.0.1", Port: -1,
			JetStream: true, StoreDir: t.TempDir(), NoLog: true, NoSigs: true,
			Cluster: server.ClusterOpts{Name: "factum", Host: "127.0.0.1", Port: ports[i]},
			Routes:  routes,
		})
		if err != nil {
			t.Fatal(err)
		}
		go s.Start()
		c.servers[i] = s
		t.Cleanup(s.Shutdown)
	}
	for _, s := range c.servers {
		if !s.ReadyForConnections(30 * time.Second) {
			t.Fatal("nats server did not start")
		}
	}
	waitFor(t, 60*time.Second, "the JetStream cluster to elect a meta leader", func() bool {
		for _, s := range c.servers {
			if s.JetStreamIsLeader() {
				return len(s.JetStreamClusterPeers()) == size
			}
		}
		return false
	})
	return c
}

// urls lists the client URLs of the nodes, as one NATS server list.
func (c *jsCluster) urls() string {
	var us []string
	for _, s := range c.servers {
		us = append(us, s.ClientURL())
	}
	return strings.Join(us, ",")
}

// stop shuts down the node named name.
func (c *jsCluster) stop(name string) {
	for i, s := range c.servers {
		if s.Name() == name {
			s.Shutdown()
			s.WaitForShutdown()
			c.down[i] = true
			return
		}
	}
	c.t.Fatalf("no node %s", name)
}

// replicated makes the world's lease bucket and command stream with
// three replicas before any instance opens them, retrying while the
// cluster cannot place them yet (its peers still joining).
func replicated(t testing.TB, w *world) {
	t.Helper()
	nc, err := natsgo.Connect(w.url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	cfg := BusConfig{JetStream: js, Partitions: &Partitions{}, Stream: w.stream, SubjectPrefix: w.prefix, Replicas: 3}
	if err := cfg.defaults(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, err := OpenLeaseBucket(ctx, js, w.bucket, 3)
		if err == nil {
			_, err = ensureCommands(ctx, &cfg)
		}
		cancel()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("replicated bucket and stream: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// proxy is a TCP proxy to a NATS server that the test can cut: cut
// closes every connection through it and refuses new ones until mend.
type proxy struct {
	l      net.Listener
	target string

	mu    sync.Mutex
	cut   bool
	conns []net.Conn
}

func startProxy(t testing.TB, target string) *proxy {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{l: l, target: strings.TrimPrefix(target, "nats://")}
	t.Cleanup(func() {
		_ = l.Close()
		p.sever(false)
	})
	go p.serve()
	return p
}

func (p *proxy) url() string { return "nats://" + p.l.Addr().String() }

func (p *proxy) serve() {
	for {
		c, err := p.l.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		cut := p.cut
		p.mu.Unlock()
		if cut {
			_ = c.Close()
			continue
		}
		up, err := net.Dial("tcp", p.target)
		if err != nil {
			_ = c.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, c, up)
		p.mu.Unlock()
		go func() { _, _ = io.Copy(up, c); _ = up.Close() }()
		go func() { _, _ = io.Copy(c, up); _ = c.Close() }()
	}
}

// sever closes every connection through the proxy; cut says whether new
// ones are refused until mend.
func (p *proxy) sever(cut bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = cut
	for _, c := range p.conns {
		_ = c.Close()
	}
	p.conns = nil
}

func (p *proxy) mend() {
	p.mu.Lock()
	p.cut = false
	p.mu.Unlock()
}

// traffic is load from many clients across many aggregates, through
// instances picked at random: acknowledged at PROCESSED, or, with
// atSent, half the clients at SENT (durable only where SENT means
// stored: not LocalFirst), each retrying a retryable failure or an
// unknown outcome under the same request ID until it is acknowledged.
type traffic struct {
	f    *fleet
	stop chan struct{}
	wg   sync.WaitGroup

	mu       sync.Mutex
	acked    map[string][]string // aggregate ID -> requests acknowledged
	sentOnly int                 // of them, acknowledged at SENT
	n        int
}

func (f *fleet) traffic(clients, aggregates int, sent bool) *traffic {
	tr := &traffic{f: f, stop: make(chan struct{}), acked: map[string][]string{}}
	for c := range clients {
		atSent := sent && c%2 == 1
		tr.wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-tr.stop:
					return
				default:
				}
				id := fmt.Sprintf("tally-%d", (c*7+i*13)%aggregates)
				req := fmt.Sprintf("c%d-%d", c, i)
				var err error
				if atSent {
					err = sendSent(tr.f.pick, id, req, 60*time.Second)
				} else {
					err = send(context.Background(), tr.f.pick, id, req, 60*time.Second)
				}
				if err != nil {
					tr.f.t.Errorf("%s: %v", req, err)
					return
				}
				tr.mu.Lock()
				tr.acked[id] = append(tr.acked[id], req)
				tr.n++
				if atSent {
					tr.sentOnly++
				}
				tr.mu.Unlock()
			}
		})
	}
	return tr
}

// count returns how many commands were acknowledged.
func (tr *traffic) count() int {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return tr.n
}

// progress waits until n more commands were acknowledged.
func (tr *traffic) progress(t testing.TB, n int) {
	t.Helper()
	from := tr.count()
	waitFor(t, 120*time.Second, "commands to go on", func() bool { return tr.count() >= from+n })
}

// end stops the load, waits until every command acknowledged at SENT was
// processed, and checks that every acknowledged command is stored exactly
// once, each aggregate's versions contiguous.
func (tr *traffic) end(t testing.TB) {
	t.Helper()
	close(tr.stop)
	stopped := time.Now()
	tr.wg.Wait()
	t.Logf("the clients' last commands took %v", time.Since(stopped).Round(time.Millisecond))
	waitFor(t, 120*time.Second, "every acknowledged command to be stored", func() bool {
		for id, reqs := range tr.acked {
			streams, err := tr.f.store.Load(context.Background(), tallyID(id), 1, eventstore.MaxVersion)
			if err != nil || len(streams) < len(reqs) {
				return false
			}
		}
		return true
	})
	t.Logf("stored %v after the load stopped", time.Since(stopped).Round(time.Millisecond))
	tr.f.checkStored(tr.acked)
	t.Logf("%d commands acknowledged (%d at SENT) over %d aggregates", tr.n, tr.sentOnly, len(tr.acked))
}

// sendSent sends addN{1} to the aggregate and returns once it is SENT,
// retrying with the same request ID while the error is retryable, until
// it is accepted or d passes.
func sendSent(e func() *engine.Engine, id, requestID string, d time.Duration) error {
	deadline := time.Now().Add(d)
	for {
		eng := e()
		var err error
		if eng == nil {
			err = factum.NewError(factum.CodeTooManyRequests, "no instance")
		} else {
			_, err = eng.Gateway().Send(context.Background(), tallyCommand(id, requestID))
		}
		if err == nil || !factum.IsRetryable(err) || time.Now().After(deadline) {
			return err
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// owners samples every instance's Owns throughout and records a moment
// when two instances own one partition.
type owners struct {
	stop chan struct{}
	done chan struct{}
	mu   sync.Mutex
	errs []string
}

func (f *fleet) sampleOwners() *owners {
	o := &owners{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(o.done)
		for {
			select {
			case <-o.stop:
				return
			default:
			}
			f.mu.Lock()
			nodes := make([]*node, 0, len(f.nodes))
			for _, n := range f.nodes {
				nodes = append(nodes, n)
			}
			f.mu.Unlock()
			for p := range f.w.partitions {
				var by []string
				for _, n := range nodes {
					if _, ok := n.parts.Owns(p); ok {
						by = append(by, n.name)
					}
				}
				if len(by) > 1 {
					o.mu.Lock()
					o.errs = append(o.errs, fmt.Sprintf("partition %d owned by %v at once", p, by))
					o.mu.Unlock()
				}
			}
			time.Sleep(time.Millisecond)
		}
	}()
	return o
}

func (o *owners) check(t testing.TB) {
	t.Helper()
	close(o.stop)
	<-o.done
	o.mu.Lock()
	defer o.mu.Unlock()
	for i, e := range o.errs {
		if i == 10 {
			t.Errorf("and %d more", len(o.errs)-i)
			break
		}
		t.Error(e)
	}
}

// commandLeader returns the node leading the world's command stream.
func commandLeader(t testing.TB, n *node, stream string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := n.js.Stream(ctx, stream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(ctx)
	if err != nil || info.Cluster == nil {
		t.Fatalf("stream %s: %v", stream, err)
	}
	return info.Cluster.Leader
}

// A three-node JetStream cluster with replicated (R3) streams and lease
// bucket, and three instances under load: the node leading the command
// stream stops; every command acknowledged at SENT or PROCESSED before,
// during and after is stored exactly once, with contiguous versions, and
// no aggregate is processed twice at once.
func TestAJetStreamNodeStopsUnderLoadAndNoCommandIsLost(t *testing.T) {
	if testing.Short() {
		t.Skip("a three-node cluster under load; not under -short")
	}
	began := time.Now()
	at := func() time.Duration { return time.Since(began).Round(time.Millisecond) }
	c := startJSCluster(t)
	w := newWorld(t, c.urls(), false, 6, 2*time.Second)
	replicated(t, w)
	f := newFleet(t, w, LocalNever)
	for _, name := range []string{"a", "b", "c"} {
		// A command the stopped node delivered into a pull that never
		// got it is delivered again only after AckWait (a minute by
		// default): shortened here to keep the test short.
		f.startOn(name, w.url, BusConfig{Replicas: 3, AckWait: 5 * time.Second})
	}
	f.balanced()
	t.Logf("%v: cluster and instances ready", at())
	tr := f.traffic(12, 24, true)
	tr.progress(t, 100)
	leader := commandLeader(t, f.nodes["a"], w.stream)
	c.stop(leader)
	t.Logf("%v: stopped %s, the command stream's leader, after %d commands", at(), leader, tr.count())
	tr.progress(t, 200)
	t.Logf("%v: %d commands", at(), tr.count())
	tr.end(t)
	t.Logf("%v: checked", at())
	f.probe.check(t)
	t.Logf("%d version conflicts", f.store.conflicts.Load())
}

// An instance whose NATS connection is cut (a proxy between it and its
// node refuses it), with commands in flight that take two leases,
// stops acting on its partitions before the others take them: no moment when two instances own one partition, no aggregate
// processed twice at once, and not one version conflict at the event
// store, whose check is only the safety net. Once the connection is back
// the instance rejoins; every acknowledged command is stored once.
func TestACutInstanceGivesItsPartitionsUpBeforeOthersTakeThem(t *testing.T) {
	if testing.Short() {
		t.Skip("a three-node cluster under load; not under -short")
	}
	c := startJSCluster(t)
	w := newWorld(t, c.urls(), false, 6, 2*time.Second)
	replicated(t, w)
	f := newFleet(t, w, LocalFirst)
	f.probe.delay = 2 * time.Millisecond
	// Now and then a command on a takes two leases (unless its context
	// ends): commands are in flight across the end of a's validity.
	var slow atomic.Int64
	f.probe.block = func(ctx context.Context, instance string, _ *factum.Command) error {
		if instance != "a" || slow.Add(1)%10 != 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("a slow command gave up: %w", ctx.Err())
		case <-time.After(2 * w.lease):
			return nil
		}
	}
	px := startProxy(t, c.servers[0].ClientURL())
	f.startOn("a", px.url(), BusConfig{Replicas: 3}, natsgo.IgnoreDiscoveredServers())
	f.startOn("b", w.url, BusConfig{Replicas: 3})
	f.startOn("c", w.url, BusConfig{Replicas: 3})
	f.balanced()
	sample := f.sampleOwners()
	tr := f.traffic(12, 24, false)
	tr.progress(t, 100)
	px.sever(true)
	t.Logf("cut a off NATS after %d commands", tr.count())
	waitFor(t, 60*time.Second, "b and c to take a's partitions", func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		return len(f.nodes["b"].parts.Owned())+len(f.nodes["c"].parts.Owned()) == w.partitions
	})
	tr.progress(t, 100)
	px.mend()
	f.balanced()
	t.Logf("a rejoined after %d commands", tr.count())
	tr.progress(t, 100)
	tr.end(t)
	sample.check(t)
	f.probe.check(t)
	if n := f.store.conflicts.Load(); n != 0 {
		t.Errorf("%d version conflicts at the event store: the fencing let a second writer reach it", n)
	}
}
