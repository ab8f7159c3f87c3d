package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/codec"
	"github.com/factum-go/factum/compensation"
	"github.com/factum-go/factum/engine"
	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/httpapi"
	"github.com/factum-go/factum/idempotency"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/cobra"
)

// serveOptions configures the example service.
type serveOptions struct {
	storeOptions
	securityOptions
	// Addr is the listen address; port 0 picks a free one.
	Addr string
	// DrainTimeout bounds the graceful shutdown.
	DrainTimeout time.Duration
	observeOptions
	clusterOptions // serve_nats.go
}

func newServeCmd() *cobra.Command {
	var opts serveOptions
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the example service (cart, order, inventory, user) with its HTTP API",
		Long: `Run the example service with its HTTP API, on the embedded store in the data
directory by default. Stops gracefully on SIGINT or SIGTERM: admission closes,
accepted commands drain, then it exits 0.

Without credentials (--api-keys-file, FACTUM_API_KEYS, --jwt-*) it serves
only on a loopback address, unless --insecure; see docs/http-api.md#security.

With --nats-url it runs as one instance of a cluster on NATS JetStream and
PostgreSQL; see docs/scale-out.md#running-a-cluster.

Environment: FACTUM_ADDR, FACTUM_DATA_DIR, FACTUM_POSTGRES_URL, FACTUM_NATS_URL.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.fromEnv = opts.NATSURL != "" && !cmd.Flags().Changed("nats-url")
			return serve(cmd.Context(), opts, cmd.OutOrStdout())
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.Addr, "addr", envOr("FACTUM_ADDR", "127.0.0.1:8080"), "listen address (FACTUM_ADDR)")
	f.StringVar(&opts.DataDir, "data-dir", envOr("FACTUM_DATA_DIR", "./factum-data"), "data directory of the embedded store (FACTUM_DATA_DIR)")
	f.StringVar(&opts.PostgresURL, "postgres-url", envOr("FACTUM_POSTGRES_URL", ""), "use PostgreSQL at this URL (FACTUM_POSTGRES_URL)")
	f.BoolVar(&opts.Memory, "memory", false, "keep everything in memory")
	f.DurationVar(&opts.DrainTimeout, "drain-timeout", 30*time.Second, "how long a shutdown may drain")
	addSecurityFlags(f, &opts.securityOptions)
	addObserveFlags(f, &opts.observeOptions)
	addClusterFlags(f, &opts.clusterOptions)
	return cmd
}

// serve runs the service until ctx ends, then drains.
func serve(ctx context.Context, opts serveOptions, log io.Writer) error {
	s, err := startServer(ctx, opts, log)
	if err != nil {
		return err
	}
	select {
	case <-ctx.Done():
	case err := <-s.failed:
		_ = s.Shutdown(context.Background())
		return err
	}
	log = s.logs // in order with the lines buffered
	fmt.Fprintln(log, "factum: draining…")
	dctx, cancel := context.WithTimeout(context.Background(), opts.DrainTimeout)
	defer cancel()
	if err := s.Shutdown(dctx); err != nil {
		return err
	}
	fmt.Fprintln(log, "factum: stopped")
	return nil
}

// server is a running example service.
type server struct {
	// URL is where it listens, such as http://127.0.0.1:8080.
	URL      string
	rt       *engine.Engine
	store    *openedStore
	http     *http.Server
	conns    *httpapi.ConnLimiter
	draining atomic.Bool
	stopped  atomic.Bool
	failed   chan error
	obs      *observer // logs, metrics, traces, pprof (serve_observe.go)
	// logs is where every line goes; Shutdown closes it last, so the
	// lines of the drain are written too.
	logs    *lineWriter
	cluster *cluster // the NATS side when clustered, else nil (serve_nats.go)
	// events and checkpoints are the engine's stores, for /readyz.
	events      eventstore.Store
	checkpoints event.CheckpointStore
}

// startServer opens the store, starts the runtime and serves the HTTP API,
// logging to out through a lineWriter: the start-up lines are written
// when it returns; Shutdown writes the rest.
func startServer(ctx context.Context, opts serveOptions, out io.Writer) (*server, error) {
	logs := newLineWriter(out)
	s, err := startServerLogging(ctx, opts, logs)
	if err != nil {
		return nil, errors.Join(err, logs.Close())
	}
	s.logs = logs
	if s.obs.registry != nil {
		if err := s.obs.registry.Register(prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "factum_log_lines_lost_total",
			Help: "Log lines lost because writing them to the output failed.",
		}, func() float64 { return float64(logs.Lost()) })); err != nil {
			return nil, errors.Join(err, s.Shutdown(context.Background()))
		}
	}
	logs.Flush()
	return s, nil
}

// startServerLogging is startServer logging to log.
func startServerLogging(ctx context.Context, opts serveOptions, log io.Writer) (*server, error) {
	if _, err := opts.checkCluster(); err != nil {
		return nil, err
	}
	idKey, err := opts.idKey()
	if err != nil {
		return nil, err
	}
	st, err := openStore(ctx, opts.storeOptions, log)
	if err != nil {
		return nil, err
	}
	obs, err := opts.observe(ctx, log, st)
	if err != nil {
		return nil, errors.Join(err, st.close())
	}
	// Snapshots and the consumers' checkpoints live in the same database
	// as the events: a restart resumes every consumer where it stopped.
	prep, err := st.storage.PrepareBackend(ctx)
	if err != nil {
		return nil, errors.Join(err, st.close())
	}
	prep = obs.prepare(prep)
	idemStore, err := st.storage.IdempotencyStore(ctx)
	if err != nil {
		return nil, errors.Join(err, st.close())
	}
	idemStore = obs.idempotency(idemStore)
	ex, err := newExample(prep)
	if err != nil {
		return nil, errors.Join(err, st.close())
	}
	// Failed event functions are recorded as executions in the same store
	// and retried by the scheduler, which the engine runs and stops;
	// operators act on them over HTTP. The engine's event store is the
	// storage's, instrumented.
	events, err := st.storage.EventStore(ctx, boundedContext)
	if err != nil {
		return nil, errors.Join(err, st.close())
	}
	checkpoints, err := st.storage.CheckpointStore(ctx, boundedContext)
	if err != nil {
		return nil, errors.Join(err, st.close())
	}
	comp := compensation.NewComponent(compensation.Config{Logger: obs.log, Attempts: obs.attempts()}, compensation.SchedulerConfig{Logger: obs.log})
	summaries, _, err := summariesComponent(ctx, st, obs.log, obs.events()) // serve_projection.go
	if err != nil {
		return nil, errors.Join(err, st.close())
	}
	ecfg := engine.Config{
		Storage: st.storage, Store: obs.store(events), Codec: codec.NewRegistry(),
		Events: event.Config{Logger: obs.log}, Sagas: ex.sagas, Processors: ex.processors,
		CommandMiddleware: obs.commands(), EventMiddleware: obs.events(), Bus: obs.bus(),
		Components: []engine.Component{comp, summaries}, IDKey: idKey,
	}
	// Clustered, the bus, the wait signals and the consumer leases are
	// the cluster's (serve_nats.go).
	cl, err := opts.startCluster(ctx, &ecfg, checkpoints, obs.wrapBus, log)
	if err != nil {
		return nil, errors.Join(err, st.close())
	}
	rt, err := engine.New(ecfg, ex.aggregates...)
	if err != nil {
		return nil, errors.Join(err, cl.close(ctx), st.close())
	}
	if err := obs.collect(rt, events, checkpoints, comp.Compensation(), summaries); err != nil {
		return nil, errors.Join(err, st.close())
	}
	// Commands sent with an Idempotency-Key header are answered once and
	// replayed after; commands without one pass (request IDs still guard
	// each aggregate). Keys are scoped by the request's tenant, which the
	// HTTP API puts in the request's context, and, with credentials, by the
	// authenticated caller: two callers never share a key.
	idem, err := idempotency.NewMiddleware(idemStore, idempotency.MiddlewareOptions{
		Principal: func(r *http.Request) (string, error) {
			if p, ok := httpapi.RequestPrincipal(r); ok {
				return p.Method + ":" + p.Name, nil
			}
			return "", nil
		},
		ReplayHeaders: httpapi.ReplayHeaders(idempotency.DefaultReplayHeaders),
		Logger:        obs.log,
	})
	if err != nil {
		return nil, errors.Join(err, st.close())
	}
	access, credentials, err := opts.access()
	if err != nil {
		return nil, errors.Join(err, st.close())
	}
	s := &server{rt: rt, store: st, obs: obs, cluster: cl, events: events, checkpoints: checkpoints, failed: make(chan error, 1)}
	ready := func(rctx context.Context) error {
		if s.draining.Load() {
			return factum.NewError(factum.CodeTooManyRequests, "draining")
		}
		return s.readiness(rctx)
	}
	h, err := httpapi.New(httpapi.Config{
		Engine:            rt,
		CommandMiddleware: idem.Wrap,
		Compensation:      comp.Service(),
		Projections:       summaries,
		Title:             "factum example service",
		Access:            access,
		Streams:           opts.streams(),
		Ready:             ready,
	})
	if err != nil {
		return nil, errors.Join(err, st.close())
	}
	routes, err := withConsole(h, opts.Metrics)
	if err != nil {
		return nil, errors.Join(err, st.close())
	}
	raw, err := net.Listen("tcp", opts.Addr)
	if err != nil {
		return nil, errors.Join(err, st.close())
	}
	sec, err := opts.secure(raw, access.Authenticator != nil)
	if err != nil {
		return nil, errors.Join(err, raw.Close(), st.close())
	}
	ln := sec.ln
	s.conns = sec.conns
	if err := obs.startPprof(opts.Pprof, log); err != nil {
		return nil, errors.Join(err, ln.Close(), st.close())
	}
	if err := rt.Start(context.WithoutCancel(ctx)); err != nil {
		return nil, errors.Join(err, ln.Close(), st.close())
	}
	s.URL = sec.scheme + "://" + ln.Addr().String()
	s.http = opts.httpServer(cl.handler(obs.handler(routes, access), access, ready), s.conns)
	go func() {
		// ErrorListener: even the errors net/http answers before any
		// handler runs are typed JSON errors.
		if err := s.http.Serve(httpapi.ErrorListener(ln)); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.failed <- err
		}
	}()
	fmt.Fprintf(log, "factum: listening on %s (OpenAPI at %s/openapi.json)\n", s.URL, s.URL)
	fmt.Fprintf(log, "factum: operator console at %s/console/\n", s.URL)
	fmt.Fprintf(log, "factum: data %s\n", st.where)
	for _, line := range []string{credentials, sec.warning, idKeyWarning(access.Authenticator != nil, idKey)} {
		if line != "" {
			fmt.Fprintln(log, line)
		}
	}
	return s, nil
}

// Shutdown stops accepting requests, waits for those in flight, drains the
// runtime's accepted commands and closes the store, all within ctx. The
// log is closed last, deferred: a step that panics still has every line
// logged before it written.
func (s *server) Shutdown(ctx context.Context) (err error) {
	s.draining.Store(true)
	defer s.stopped.Store(true)
	if s.logs != nil {
		defer func() { err = errors.Join(err, s.logs.Close()) }()
	}
	errHTTP := s.http.Shutdown(ctx)
	errLeave := s.cluster.leave(ctx)
	errRT := s.rt.Shutdown(ctx)
	errCl := s.cluster.close(ctx)
	return errors.Join(errHTTP, errLeave, errRT, errCl, s.store.close())
}

// pingStore reports whether the database answers within a second: while
// it does not (PostgreSQL restarting, say), /readyz is 503 and the
// service, which reconnects by itself, is ready again once it does.
func (s *server) pingStore(ctx context.Context) error {
	if s.store.ping == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	if err := s.store.ping(ctx); err != nil {
		return factum.Errorf(factum.CodeInternalServerError, "database: %w", err)
	}
	return nil
}
