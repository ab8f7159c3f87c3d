package telemetry_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/factum-go/factum/telemetry"
	"github.com/prometheus/client_golang/prometheus"
)

// An HTTP API instrumented with metrics: requests are counted by route
// template, never by path.
func Example() {
	reg := prometheus.NewRegistry()
	tel, err := telemetry.New(telemetry.Config{Registerer: reg})
	if err != nil {
		panic(err)
	}
	api := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	h := tel.HTTP(api)
	for _, path := range []string{"/cart/cart-1/state", "/cart/cart-2/state"} {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", path, nil))
	}
	fams, err := reg.Gather()
	if err != nil {
		panic(err)
	}
	for _, f := range fams {
		if f.GetName() != "factum_http_requests_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			fmt.Println(labels["route"], labels["status"], m.GetCounter().GetValue())
		}
	}
	// Output:
	// GET /{aggregate}/{id}/state 200 2
}
