package telemetry_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/factum-go/factum/telemetry"
)

// jsonKeys returns the top-level keys of the JSON object line, in order,
// each as often as it appears (json.Unmarshal keeps only the last of a
// repeated key).
func jsonKeys(t *testing.T, line []byte) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(line))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("log line %q is no JSON object: %v", line, err)
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		keys = append(keys, tok.(string))
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
	}
	return keys
}

// textKeys returns the keys of the key=value line, in order, each as
// often as it appears; a value is quoted (strconv) or ends at a space.
func textKeys(t *testing.T, line []byte) []string {
	t.Helper()
	var keys []string
	rest := string(line)
	for rest != "" {
		k, v, ok := strings.Cut(rest, "=")
		if !ok || k == "" || strings.ContainsAny(k, " \"") {
			t.Fatalf("log line %q: no key=value at %q", line, rest)
		}
		keys = append(keys, k)
		if strings.HasPrefix(v, `"`) {
			q, err := strconv.QuotedPrefix(v)
			if err != nil {
				t.Fatalf("log line %q: %v", line, err)
			}
			v = v[len(q):]
		} else if i := strings.IndexByte(v, ' '); i >= 0 {
			v = v[i:]
		} else {
			v = ""
		}
		rest = strings.TrimPrefix(v, " ")
	}
	return keys
}

// The access log line of a traced request names each key once, trace_id
// and span_id included, whether the logger adds the trace itself
// (NewLogger) or not (a plain handler, which gets the access log's
// trace_id only).
func TestAccessLogNamesEachKeyOnce(t *testing.T) {
	for _, c := range []struct {
		name     string
		logger   func(*bytes.Buffer) (*slog.Logger, error)
		keys     func(*testing.T, []byte) []string
		wantSpan bool
	}{
		{"json", func(b *bytes.Buffer) (*slog.Logger, error) {
			return telemetry.NewLogger(b, telemetry.FormatJSON, slog.LevelInfo)
		}, jsonKeys, true},
		{"text", func(b *bytes.Buffer) (*slog.Logger, error) {
			return telemetry.NewLogger(b, telemetry.FormatText, slog.LevelInfo)
		}, textKeys, true},
		{"plain json handler", func(b *bytes.Buffer) (*slog.Logger, error) {
			return slog.New(slog.NewJSONHandler(b, nil)), nil
		}, jsonKeys, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			var logs bytes.Buffer
			logger, err := c.logger(&logs)
			if err != nil {
				t.Fatal(err)
			}
			tp, err := telemetry.NewTracerProvider(context.Background(), telemetry.TracingConfig{Exporter: tracetestExporter(t), Sample: 1})
			if err != nil {
				t.Fatal(err)
			}
			tel, err := telemetry.New(telemetry.Config{TracerProvider: tp, Logger: logger})
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(tel.HTTP(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Command-Id", "cmd-42")
			})))
			t.Cleanup(srv.Close)
			res, err := http.Post(srv.URL+"/order/o-1/place_order", "application/json", strings.NewReader(`{}`))
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			sc := bufio.NewScanner(&logs)
			lines := 0
			for sc.Scan() {
				lines++
				count := map[string]int{}
				for _, k := range c.keys(t, sc.Bytes()) {
					count[k]++
				}
				for k, n := range count {
					if n != 1 {
						t.Errorf("key %s appears %d times in %s", k, n, sc.Text())
					}
				}
				want := []string{"msg", "method", "route", "status", "duration", "command_id", "trace_id"}
				if c.wantSpan {
					want = append(want, "span_id")
				}
				for _, k := range want {
					if count[k] == 0 {
						t.Errorf("key %s missing from %s", k, sc.Text())
					}
				}
			}
			if lines != 1 {
				t.Fatalf("%d log lines, want the access line:\n%s", lines, logs.String())
			}
		})
	}
}
