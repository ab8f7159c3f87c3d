package httpapi

import (
	"net/http"
	"strconv"
	"time"
)

// HeaderServerTiming carries the server's own time for a command, from
// decoding its body to its result (W3C Server-Timing, metric "app", in
// milliseconds), so a load tool can put it beside the latency it measured.
const HeaderServerTiming = "Server-Timing"

// setServerTiming reports the time since start as the "app" metric.
func setServerTiming(w http.ResponseWriter, start time.Time) {
	ms := float64(time.Since(start)) / float64(time.Millisecond)
	w.Header().Set(HeaderServerTiming, "app;dur="+strconv.FormatFloat(ms, 'f', 3, 64))
}
