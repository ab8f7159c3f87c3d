package httpapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/command"
)

// wantsEventStream reports whether the client asked for Server-Sent Events.
func wantsEventStream(r *http.Request) bool {
	for _, v := range r.Header.Values("Accept") {
		if strings.Contains(v, "text/event-stream") {
			return true
		}
	}
	return false
}

// stream sends cmd and writes every result on the way to the plan's stage
// as one SSE event: "event: <STAGE>" and the Result as JSON data. A failure
// before anything was written (validation, an unknown aggregate) is an
// ordinary error response with its status; after that, failures are events
// whose data has a code other than Ok, and the stream ends.
func (h *Handler) stream(w http.ResponseWriter, r *http.Request, cmd factum.Command, plan command.WaitPlan) {
	rc := http.NewResponseController(w)
	// A server-wide write timeout must not cut a wait the caller may ask
	// for; the wait itself is bounded by the plan's timeout.
	_ = rc.SetWriteDeadline(time.Now().Add(h.cfg.MaxWaitTimeout + 10*time.Second))
	n := 0
	for res, err := range h.rt.Gateway().SendAndWaitStream(r.Context(), cmd, plan) {
		if n == 0 {
			setResultHeaders(w, res)
			if err != nil && res.Stage <= factum.StageSent {
				writeError(w, err)
				return
			}
			w.Header().Set("Content-Type", "text/event-stream")
			w.Header().Set("Cache-Control", "no-cache")
			w.Header().Set("X-Accel-Buffering", "no")
			w.WriteHeader(http.StatusOK)
		}
		n++
		b, merr := json.Marshal(res)
		if merr != nil {
			b, _ = json.Marshal(bodyOf(factum.Errorf(factum.CodeInternalServerError, "result does not encode: %w", merr)))
		}
		if _, werr := fmt.Fprintf(w, "id: %d\nevent: %s\ndata: %s\n\n", n, res.Stage, b); werr != nil {
			return // the client went away; the command goes on
		}
		if ferr := rc.Flush(); ferr != nil {
			return
		}
	}
}
