package telemetry_test

import (
	"context"
	"errors"
	"testing"

	"github.com/factum-go/factum/projection"
	"github.com/factum-go/factum/telemetry"
	"github.com/prometheus/client_golang/prometheus"
)

func TestProjectionLagReportsEachBuild(t *testing.T) {
	var statuses []projection.Status
	var fail error
	lag, err := telemetry.NewProjectionLag(func(context.Context) ([]projection.Status, error) { return statuses, fail }, 0)
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(lag)
	statuses = []projection.Status{
		{Context: "shop", Name: "summaries", Live: &projection.BuildStatus{Lag: 7}, Next: &projection.BuildStatus{Lag: 1200}},
		{Context: "shop", Name: "stock", Live: &projection.BuildStatus{Lag: 0}},
	}
	fams := scrape(t, reg)
	for _, c := range []struct {
		projection, build string
		want              float64
	}{{"shop/summaries", "live", 7}, {"shop/summaries", "next", 1200}, {"shop/stock", "live", 0}} {
		s := sample(fams, "factum_projection_lag_streams", map[string]string{"projection": c.projection, "build": c.build})
		if s == nil || s.GetGauge().GetValue() != c.want {
			t.Errorf("%s %s: %v, want %v", c.projection, c.build, s, c.want)
		}
	}
	if s := sample(fams, "factum_projection_lag_streams", map[string]string{"projection": "shop/stock", "build": "next"}); s != nil {
		t.Errorf("a build that is not under way has a lag: %v", s)
	}
	if s := sample(fams, "factum_projection_lag_read_errors", nil); s == nil || s.GetGauge().GetValue() != 0 {
		t.Errorf("read errors %v, want 0", s)
	}
	statuses, fail = nil, errors.New("store down")
	fams = scrape(t, reg)
	if s := sample(fams, "factum_projection_lag_read_errors", nil); s == nil || s.GetGauge().GetValue() != 1 {
		t.Errorf("read errors after a failed list %v, want 1", s)
	}
	if _, err := telemetry.NewProjectionLag(nil, 0); err == nil {
		t.Error("NewProjectionLag(nil) succeeded")
	}
}
