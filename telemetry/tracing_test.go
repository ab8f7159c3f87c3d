package telemetry_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/telemetry"
)

// Spans reach an OTLP/HTTP collector at the endpoint's /v1/traces when
// the provider shuts down (it flushes its batch).
func TestSpansReachAnOTLPCollector(t *testing.T) {
	var mu sync.Mutex
	var posts []string
	var bytes int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		posts = append(posts, r.Method+" "+r.URL.Path+" "+r.Header.Get("Content-Type"))
		bytes += len(b)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	ctx := context.Background()
	tp, err := telemetry.NewTracerProvider(ctx, telemetry.TracingConfig{Endpoint: srv.URL, Sample: 1, ServiceName: "factum-test"})
	if err != nil {
		t.Fatal(err)
	}
	_, span := tp.Tracer("test").Start(ctx, "one")
	span.End()
	if err := tp.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(posts) != 1 || posts[0] != "POST /v1/traces application/x-protobuf" || bytes == 0 {
		t.Fatalf("collector got %q (%d bytes)", posts, bytes)
	}
}

func TestTracingConfigIsValidated(t *testing.T) {
	for _, cfg := range []telemetry.TracingConfig{
		{Sample: -0.1}, {Sample: 1.5},
		{Endpoint: "127.0.0.1:4318", Sample: 1}, {Endpoint: "ftp://collector", Sample: 1}, {Endpoint: "http://", Sample: 1},
	} {
		if _, err := telemetry.NewTracerProvider(context.Background(), cfg); factum.CodeOf(err) != factum.CodeIllegalArgument {
			t.Errorf("%+v: %v, want IllegalArgument", cfg, err)
		}
	}
}
