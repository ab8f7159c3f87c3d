package idempotency

import (
	"encoding/json"
	"net/http"
	"strconv"
)

// The problem types of the middleware's error responses (RFC 9457
// application/problem+json). Clients branch on the type, not the text.
const (
	ProblemKeyMissing     = "urn:factum:idempotency:key-missing"
	ProblemKeyInvalid     = "urn:factum:idempotency:key-invalid"
	ProblemKeyReused      = "urn:factum:idempotency:key-reused"
	ProblemInProgress     = "urn:factum:idempotency:in-progress"
	ProblemFailed         = "urn:factum:idempotency:failed"
	ProblemBodyTooLarge   = "urn:factum:idempotency:request-too-large"
	ProblemBadRequest     = "urn:factum:idempotency:bad-request"
	ProblemUnavailable    = "urn:factum:idempotency:store-unavailable"
	ProblemBodyNotStored  = "urn:factum:idempotency:response-not-stored"
	ProblemStoredResponse = "urn:factum:idempotency:stored-response-unreadable"
)

// Problem is the body of the middleware's error responses.
type Problem struct {
	Type   string `json:"type"`
	Title  string `json:"title"`
	Status int    `json:"status"`
	Detail string `json:"detail,omitempty"`
}

// writeProblem sends p with its status. retryAfter, when positive, is sent
// as Retry-After in seconds.
func writeProblem(w http.ResponseWriter, p Problem, retryAfter int) {
	h := w.Header()
	h.Set("Content-Type", "application/problem+json")
	h.Set("Cache-Control", "no-store")
	if retryAfter > 0 {
		h.Set("Retry-After", strconv.Itoa(retryAfter))
	}
	w.WriteHeader(p.Status)
	_ = json.NewEncoder(w).Encode(p) // a client gone away is no error of ours
}
