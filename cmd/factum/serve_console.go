package main

import (
	"net/http"

	"github.com/factum-go/factum/console"
)

// withConsole serves the operator console under /console/ beside the API
// (the console's pages are static; every datum they show comes from the
// API, with the operator's own credential) and redirects / to it.
func withConsole(api http.Handler) (http.Handler, error) {
	c, err := console.New(console.Config{Title: "factum example service"})
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle(console.DefaultPrefix, c)
	mux.Handle("GET /{$}", http.RedirectHandler(console.DefaultPrefix, http.StatusFound))
	mux.Handle("/", api)
	return mux, nil
}
