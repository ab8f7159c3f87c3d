package console_test

import (
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"

	"github.com/factum-go/factum/console"
)

// Mount the console beside an API handler (here a stand-in for
// httpapi.New's) on one origin.
func Example() {
	c, err := console.New(console.Config{Title: "shop"})
	if err != nil {
		log.Fatal(err)
	}
	api := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, `{"status":"ok"}`) })
	mux := http.NewServeMux()
	mux.Handle(console.DefaultPrefix, c)
	mux.Handle("/", api)
	srv := httptest.NewServer(mux)
	defer srv.Close()

	res, err := http.Get(srv.URL + "/console/config.json")
	if err != nil {
		log.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	fmt.Println(res.Header.Get("Content-Type"))
	fmt.Println(string(b))
	// Output:
	// application/json
	// {"api":"/","metrics":"","prefix":"/console/","title":"shop"}
}
