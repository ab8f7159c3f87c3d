package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/engine"
	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/nats"
	natsgo "github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/spf13/pflag"
)

// clusterOptions are serve's flags for running as one instance of several
// on NATS JetStream and one PostgreSQL database. See docs/scale-out.md.
type clusterOptions struct {
	// NATSURL, when set, runs the service clustered.
	NATSURL string
	// NATSCreds is a NATS credentials file (JWT and nkey seed).
	NATSCreds string
	// Instance names this instance; hostname-pid if empty.
	Instance string
	// Partitions is the number of partitions of the context.
	Partitions int
	// Lease is the partition leases' and the consumer leases' length.
	Lease time.Duration
	// Namespace prefixes the NATS subjects, the stream and the bucket, so
	// that services (or tests) sharing a NATS server stay apart.
	Namespace string
	// fromEnv says NATSURL came from FACTUM_NATS_URL, not the flag: then
	// SQLite and --memory win over it, as --memory wins over
	// FACTUM_POSTGRES_URL, instead of being refused.
	fromEnv bool
}

func addClusterFlags(f *pflag.FlagSet, o *clusterOptions) {
	f.StringVar(&o.NATSURL, "nats-url", envOr("FACTUM_NATS_URL", ""), "run clustered on NATS JetStream at this URL, with the other instances on the same PostgreSQL database (FACTUM_NATS_URL, which --memory and SQLite win over)")
	f.StringVar(&o.NATSCreds, "nats-creds", envOr("FACTUM_NATS_CREDS", ""), "NATS credentials file (FACTUM_NATS_CREDS); a user and password or token may also be in --nats-url")
	f.StringVar(&o.Instance, "instance", envOr("FACTUM_INSTANCE", ""), "this instance's name, unique in the cluster: letters, digits, '-' and '_' (FACTUM_INSTANCE; default hostname-pid)")
	f.IntVar(&o.Partitions, "partitions", nats.DefaultPartitions, "partitions of the context's aggregates; every instance must use the same number")
	f.DurationVar(&o.Lease, "lease", nats.DefaultLease, "lease of a partition and of a consumer group: how long a dead instance's work waits to be taken over")
	f.StringVar(&o.Namespace, "nats-namespace", envOr("FACTUM_NATS_NAMESPACE", "factum"), "prefix of the NATS subjects, stream and bucket of this service (FACTUM_NATS_NAMESPACE)")
}

// cluster is a clustered service's NATS side: the connection, the
// partitions, the wait signals. A nil *cluster is an unclustered service.
type cluster struct {
	opts    clusterOptions
	nc      *natsgo.Conn
	parts   *nats.Partitions
	signals *nats.Signals
}

// defaultInstance names an instance that was given no name: the host and
// the process, which are stable while it runs and unique among the
// processes of a host.
func defaultInstance() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "factum"
	}
	var b strings.Builder
	for _, r := range host {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	name := b.String()
	if len(name) > 48 {
		name = name[:48]
	}
	return fmt.Sprintf("%s-%d", name, os.Getpid())
}

// check validates the cluster flags against the storage: instances share
// one PostgreSQL database, which SQLite (one process's file) and memory
// cannot be.
func (so serveOptions) checkCluster() (clusterOptions, error) {
	o := so.clusterOptions
	if o.NATSURL == "" {
		return o, nil
	}
	if so.Memory || so.PostgresURL == "" {
		if o.fromEnv {
			o.NATSURL = ""
			return o, nil
		}
		return o, factum.IllegalArgument("--nats-url runs the service clustered, which needs the instances' shared database: give --postgres-url (SQLite and --memory belong to one process)")
	}
	if o.Instance == "" {
		o.Instance = defaultInstance()
	}
	if err := nats.ValidateInstance(o.Instance); err != nil {
		return o, fmt.Errorf("--instance: %w", err)
	}
	if err := nats.ValidateInstance(o.Namespace); err != nil {
		return o, fmt.Errorf("--nats-namespace: %w", err)
	}
	if o.Partitions < 1 {
		return o, factum.IllegalArgument("--partitions must be at least 1")
	}
	if o.Lease < nats.MinLease {
		return o, factum.IllegalArgument(fmt.Sprintf("--lease must be at least %v", nats.MinLease))
	}
	return o, nil
}

// startCluster connects to NATS and sets cfg up to run as one instance of
// the cluster: the JetStream command bus over this instance's partitions
// (around bus, the service's wrapping of a bus), wait signals on this
// instance's subject, and the consumers under database leases, so that
// each consumer group runs once in the cluster. It returns nil without
// --nats-url.
func (so serveOptions) startCluster(ctx context.Context, cfg *engine.Config, checkpoints event.CheckpointStore, wrapBus func(engine.NewBus) engine.NewBus, out io.Writer) (*cluster, error) {
	o, err := so.checkCluster()
	if err != nil || o.NATSURL == "" {
		if err == nil && so.NATSURL != "" {
			fmt.Fprintln(out, "factum: FACTUM_NATS_URL ignored: a cluster shares a PostgreSQL database (--postgres-url), not SQLite or memory")
		}
		return nil, err
	}
	leases, ok := checkpoints.(event.LeaseStore)
	if !ok {
		return nil, factum.IllegalState(fmt.Sprintf("--nats-url: the checkpoint store %T grants no leases", checkpoints))
	}
	opts := []natsgo.Option{
		natsgo.Name("factum " + o.Instance), natsgo.MaxReconnects(-1), natsgo.ReconnectWait(250 * time.Millisecond),
		// Reconnect on its own after a connection is lost; at start-up,
		// an unreachable server is an error the operator sees at once.
	}
	if o.NATSCreds != "" {
		opts = append(opts, natsgo.UserCredentials(o.NATSCreds))
	}
	nc, err := natsgo.Connect(o.NATSURL, opts...)
	if err != nil {
		return nil, fmt.Errorf("--nats-url %s: %w", redact(o.NATSURL), err)
	}
	c := &cluster{opts: o, nc: nc}
	fail := func(err error) (*cluster, error) {
		return nil, errors.Join(err, c.close(context.WithoutCancel(ctx)))
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return fail(err)
	}
	sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	kv, err := nats.OpenLeaseBucket(sctx, js, o.Namespace+"_leases", 1)
	if err != nil {
		return fail(err)
	}
	c.parts, err = nats.StartPartitions(sctx, nats.PartitionsConfig{
		KeyValue: kv, Context: boundedContext, Partitions: o.Partitions, Instance: o.Instance, Lease: o.Lease,
	})
	if err != nil {
		return fail(err)
	}
	c.signals, err = nats.NewSignals(nats.SignalsConfig{Conn: nc, Instance: o.Instance, Prefix: o.Namespace + ".signal", Logger: cfg.Events.Logger})
	if err != nil {
		return fail(err)
	}
	bus, err := nats.NewBus(sctx, nats.BusConfig{
		JetStream: js, Partitions: c.parts,
		Stream: strings.ToUpper(o.Namespace) + "_COMMANDS", SubjectPrefix: o.Namespace + ".cmd",
		Logger: cfg.Events.Logger,
	})
	if err != nil {
		return fail(err)
	}
	cfg.Bus = c.signals.Bus(wrapBus(bus))
	cfg.Signals = c.signals.Sink
	cfg.Events.Leases, cfg.Events.Holder, cfg.Events.LeaseTTL = leases, o.Instance, o.Lease
	fmt.Fprintf(out, "factum: instance %s of a cluster on NATS %s (namespace %s, %d partitions, lease %v)\n",
		o.Instance, redact(o.NATSURL), o.Namespace, o.Partitions, o.Lease)
	return c, nil
}

// leave gives the partitions up, before the engine's shutdown: their
// running commands end, the queued local ones are handed over, and the
// other instances take them. An engine shut down while it still owned
// partitions would keep taking the other instances' commands from the
// stream and, under load, never settle.
func (c *cluster) leave(ctx context.Context) error {
	if c == nil || c.parts == nil {
		return nil
	}
	return c.parts.Close(ctx)
}

// close stops receiving signals and closes the connection: after the
// engine's shutdown, so that the commands and signals in flight are done
// with. It gives up whatever partitions leave did not.
func (c *cluster) close(ctx context.Context) error {
	if c == nil {
		return nil
	}
	var errs []error
	if c.signals != nil {
		errs = append(errs, c.signals.Close())
	}
	if c.parts != nil {
		errs = append(errs, c.parts.Close(ctx)) // nil after leave
	}
	if c.nc != nil {
		c.nc.Close()
	}
	return errors.Join(errs...)
}

// ready is the cluster's part of /readyz: not ready without a NATS
// connection (the bus could neither send nor receive, and the partitions
// lapse).
func (c *cluster) ready(context.Context) error {
	if st := c.nc.Status(); st != natsgo.CONNECTED {
		return factum.Errorf(factum.CodeInternalServerError, "no NATS connection (%s)", strings.ToLower(st.String()))
	}
	return nil
}
