package httpapi

import "net/http"

// healthz serves GET /healthz: the process answers.
func (h *Handler) healthz(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// readyz serves GET /readyz: Config.Ready decides; 503 with the reason
// when it fails (while the service starts or drains, say).
func (h *Handler) readyz(w http.ResponseWriter, r *http.Request) {
	if h.cfg.Ready != nil {
		if err := h.cfg.Ready(r.Context()); err != nil {
			body := bodyOf(err)
			writeJSON(w, http.StatusServiceUnavailable, body)
			return
		}
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
}
