package main

import (
	"net/http"

	"github.com/factum-go/factum/console"
)

// withConsole serves the operator console under /console/ beside the API
// (the console's pages are static; every datum they show comes from the
// API, with the operator's own credential) and redirects / to it. With
// metrics on, the overview shows /metrics.
func withConsole(api http.Handler, metrics bool) (http.Handler, error) {
	cfg := console.Config{Title: "factum example service"}
	if metrics {
		cfg.Metrics = "/metrics"
	}
	c, err := console.New(cfg)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle(console.DefaultPrefix, c)
	mux.Handle("GET /{$}", http.RedirectHandler(console.DefaultPrefix, http.StatusFound))
	mux.Handle("/", api)
	return mux, nil
}
