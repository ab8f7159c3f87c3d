package telemetry

import (
	"context"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/compensation"
	"github.com/prometheus/client_golang/prometheus"
)

// Backlog reports the compensation backlog at each scrape:
// factum_compensation_executions by status (failed, prepared, succeeded)
// and factum_compensation_blocked (executions that wait for an operator).
type Backlog struct {
	counts  func(context.Context) (compensation.Counts, error)
	timeout time.Duration
	byState *prometheus.Desc
	blocked *prometheus.Desc
	errors  *prometheus.Desc
}

// NewBacklog returns the collector over counts, such as
// (*compensation.Service).Counts; timeout bounds one scrape's count (0
// means DefaultCollectTimeout).
func NewBacklog(counts func(context.Context) (compensation.Counts, error), timeout time.Duration) (*Backlog, error) {
	if counts == nil || timeout < 0 {
		return nil, factum.IllegalArgument("telemetry: NewBacklog needs a counts function and a non-negative timeout")
	}
	if timeout == 0 {
		timeout = DefaultCollectTimeout
	}
	return &Backlog{
		counts:  counts,
		timeout: timeout,
		byState: prometheus.NewDesc("factum_compensation_executions", "Compensation executions of failed event functions, by status.", []string{"status"}, nil),
		blocked: prometheus.NewDesc("factum_compensation_blocked", "Compensation executions neither succeeded nor retryable: they wait for an operator.", nil, nil),
		errors:  prometheus.NewDesc("factum_compensation_read_errors", "1 when the executions could not be counted at this scrape.", nil, nil),
	}, nil
}

// Describe implements prometheus.Collector.
func (b *Backlog) Describe(ch chan<- *prometheus.Desc) {
	ch <- b.byState
	ch <- b.blocked
	ch <- b.errors
}

// Collect implements prometheus.Collector.
func (b *Backlog) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), b.timeout)
	defer cancel()
	c, err := b.counts(ctx)
	ch <- readErrors(b.errors, err)
	if err != nil {
		return
	}
	for status, n := range map[string]int64{"failed": c.Failed, "prepared": c.Prepared, "succeeded": c.Succeeded} {
		ch <- prometheus.MustNewConstMetric(b.byState, prometheus.GaugeValue, float64(n), status)
	}
	ch <- prometheus.MustNewConstMetric(b.blocked, prometheus.GaugeValue, float64(c.Blocked))
}
