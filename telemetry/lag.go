package telemetry

import (
	"context"
	"fmt"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/event"
	"github.com/prometheus/client_golang/prometheus"
)

// Defaults of LagConfig.
const (
	// DefaultLagLimit bounds the streams counted behind one group per
	// scrape; a larger lag is reported as this many.
	DefaultLagLimit = 1000
	// DefaultCollectTimeout bounds one collector's reads per scrape.
	DefaultCollectTimeout = 2 * time.Second
)

// LogReader reads the global log; eventstore.Store implements it.
type LogReader interface {
	ReadLog(ctx context.Context, after factum.Position, limit int) ([]factum.EventStream, error)
}

// LagConfig configures a Lag collector.
type LagConfig struct {
	// Log is the global log the groups consume; required.
	Log LogReader
	// Checkpoints holds the groups' positions; required.
	Checkpoints event.CheckpointStore
	// Groups returns the consumer groups to report; required. It is
	// called at each scrape (engine.Engine.Functions().Processors() names
	// them).
	Groups func() []factum.Function
	// Limit bounds the streams counted per group (default DefaultLagLimit).
	Limit int
	// Timeout bounds one scrape's reads (default DefaultCollectTimeout).
	Timeout time.Duration
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// GroupLag is how far one consumer group is behind the log end.
type GroupLag struct {
	Group factum.Function
	// Streams counts the streams after the group's checkpoint, at most
	// the configured limit.
	Streams int
	// Age is how long ago the oldest of them was made; zero when the
	// group is caught up.
	Age time.Duration
}

// Lag reports consumer lag at each scrape: factum_consumer_lag_streams
// and factum_consumer_lag_seconds per consumer group (labelled by the
// group's context/processor), read from the log and the checkpoints.
type Lag struct {
	cfg     LagConfig
	streams *prometheus.Desc
	seconds *prometheus.Desc
	errors  *prometheus.Desc
}

// NewLag returns the collector cfg describes; register it with a
// prometheus.Registerer.
func NewLag(cfg LagConfig) (*Lag, error) {
	if cfg.Log == nil || cfg.Checkpoints == nil || cfg.Groups == nil {
		return nil, factum.IllegalArgument("telemetry: LagConfig needs Log, Checkpoints and Groups")
	}
	if cfg.Limit < 0 || cfg.Timeout < 0 {
		return nil, factum.IllegalArgument("telemetry: negative LagConfig limit")
	}
	if cfg.Limit == 0 {
		cfg.Limit = DefaultLagLimit
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultCollectTimeout
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Lag{
		cfg:     cfg,
		streams: prometheus.NewDesc("factum_consumer_lag_streams", "Streams in the log after the consumer group's checkpoint (at most the collector's limit).", []string{"group"}, nil),
		seconds: prometheus.NewDesc("factum_consumer_lag_seconds", "Age of the oldest stream the consumer group has not consumed; 0 when caught up.", []string{"group"}, nil),
		errors:  prometheus.NewDesc("factum_consumer_lag_read_errors", "1 when the group's lag could not be read at this scrape.", []string{"group"}, nil),
	}, nil
}

// Read returns every group's lag now.
func (l *Lag) Read(ctx context.Context) ([]GroupLag, error) {
	groups := l.cfg.Groups()
	out := make([]GroupLag, 0, len(groups))
	for _, g := range groups {
		gl, err := l.read(ctx, g)
		if err != nil {
			return out, err
		}
		out = append(out, gl)
	}
	return out, nil
}

func (l *Lag) read(ctx context.Context, g factum.Function) (GroupLag, error) {
	gl := GroupLag{Group: g}
	pos, err := l.cfg.Checkpoints.Checkpoint(ctx, g)
	if err != nil {
		return gl, fmt.Errorf("telemetry: checkpoint of %s: %w", g, err)
	}
	const page = 500
	for gl.Streams < l.cfg.Limit {
		n := min(page, l.cfg.Limit-gl.Streams)
		batch, err := l.cfg.Log.ReadLog(ctx, pos, n)
		if err != nil {
			return gl, fmt.Errorf("telemetry: read log after %s: %w", pos, err)
		}
		if len(batch) == 0 {
			break
		}
		if gl.Streams == 0 {
			gl.Age = max(l.cfg.Now().Sub(batch[0].CreateTime), 0)
		}
		gl.Streams += len(batch)
		pos = batch[len(batch)-1].Position
		if len(batch) < n {
			break
		}
	}
	return gl, nil
}

// groupLabel names a group by context and processor (a group's
// Function has no Name).
func groupLabel(g factum.Function) string { return g.Context + "/" + g.Processor }

// Describe implements prometheus.Collector.
func (l *Lag) Describe(ch chan<- *prometheus.Desc) {
	ch <- l.streams
	ch <- l.seconds
	ch <- l.errors
}

// Collect implements prometheus.Collector.
func (l *Lag) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), l.cfg.Timeout)
	defer cancel()
	for _, g := range l.cfg.Groups() {
		label := groupLabel(g)
		gl, err := l.read(ctx, g)
		if err == nil {
			ch <- prometheus.MustNewConstMetric(l.streams, prometheus.GaugeValue, float64(gl.Streams), label)
			ch <- prometheus.MustNewConstMetric(l.seconds, prometheus.GaugeValue, gl.Age.Seconds(), label)
		}
		ch <- readErrors(l.errors, err, label)
	}
}

// readErrors is the sample of a collector's read-errors gauge desc at
// this scrape: 1 when its read failed with err, 0 when it did not.
func readErrors(desc *prometheus.Desc, err error, labels ...string) prometheus.Metric {
	failed := 0.0
	if err != nil {
		failed = 1
	}
	return prometheus.MustNewConstMetric(desc, prometheus.GaugeValue, failed, labels...)
}
