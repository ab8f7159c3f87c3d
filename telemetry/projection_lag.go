package telemetry

import (
	"context"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/projection"
	"github.com/prometheus/client_golang/prometheus"
)

// ProjectionLag reports, at each scrape, how far each transactional
// projection's builds are behind the log: factum_projection_lag_streams
// per projection (context/name) and build ("live", or "next" while a
// rebuild fills one), at most projection.MaxLag. Consumer groups of event
// functions are Lag's; a projection's builds keep their checkpoints in
// the projection's own store, so they are read through its status.
type ProjectionLag struct {
	list    func(context.Context) ([]projection.Status, error)
	timeout time.Duration
	streams *prometheus.Desc
	errors  *prometheus.Desc
}

// NewProjectionLag returns a collector reading list (a
// projection.Component's List) at each scrape, within timeout (default
// DefaultCollectTimeout).
func NewProjectionLag(list func(context.Context) ([]projection.Status, error), timeout time.Duration) (*ProjectionLag, error) {
	if list == nil {
		return nil, factum.IllegalArgument("telemetry: NewProjectionLag needs a list function")
	}
	if timeout < 0 {
		return nil, factum.IllegalArgument("telemetry: negative projection lag timeout")
	}
	if timeout == 0 {
		timeout = DefaultCollectTimeout
	}
	return &ProjectionLag{
		list: list, timeout: timeout,
		streams: prometheus.NewDesc("factum_projection_lag_streams", "Streams in the log after the projection build's checkpoint (at most projection.MaxLag).", []string{"projection", "build"}, nil),
		errors:  prometheus.NewDesc("factum_projection_lag_read_errors", "1 when the projections' lag could not be read at this scrape.", nil, nil),
	}, nil
}

// Describe implements prometheus.Collector.
func (l *ProjectionLag) Describe(ch chan<- *prometheus.Desc) {
	ch <- l.streams
	ch <- l.errors
}

// Collect implements prometheus.Collector.
func (l *ProjectionLag) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), l.timeout)
	defer cancel()
	all, err := l.list(ctx)
	for _, s := range all {
		name := s.Context + "/" + s.Name
		if s.Live != nil {
			ch <- prometheus.MustNewConstMetric(l.streams, prometheus.GaugeValue, float64(s.Live.Lag), name, "live")
		}
		if s.Next != nil {
			ch <- prometheus.MustNewConstMetric(l.streams, prometheus.GaugeValue, float64(s.Next.Lag), name, "next")
		}
	}
	ch <- readErrors(l.errors, err)
}
