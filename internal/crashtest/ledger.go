package crashtest

import (
	"fmt"
	"sort"
	"sync"
)

// Request is one command the harness sent: where, which intent, what.
type Request struct {
	// Aggregate is the aggregate type's URL name (cart, order, inventory).
	Aggregate string
	// ID is the aggregate ID.
	ID string
	// Command is the command's URL name (add_item).
	Command string
	// RequestID is the intent; a retry reuses it.
	RequestID string
	// Body is the JSON body.
	Body []byte
}

// Key is the aggregate a request went to.
func (r Request) Key() AggregateKey { return AggregateKey{r.Aggregate, r.ID} }

// AggregateKey names an aggregate in URLs.
type AggregateKey struct{ Aggregate, ID string }

// Ack is a request the service acknowledged as appended (200 with
// errorCode Ok at PROCESSED or later) and the version it named.
type Ack struct {
	Request
	Version int
}

// Ledger records what clients sent and what the service acknowledged. It
// is safe for concurrent use.
type Ledger struct {
	mu       sync.Mutex
	acks     []Ack
	unknown  map[string]Request // by request ID: no answer (transport error, 5xx, timeout)
	rejected int
	touched  map[AggregateKey]bool
	invalid  []string
	// unknownTotal counts every unknown outcome recorded, settled or not.
	unknownTotal int
}

// NewLedger returns an empty ledger.
func NewLedger() *Ledger {
	return &Ledger{unknown: map[string]Request{}, touched: map[AggregateKey]bool{}}
}

// Acked records an acknowledged request; it settles an unknown one.
func (l *Ledger) Acked(r Request, version int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.acks = append(l.acks, Ack{Request: r, Version: version})
	delete(l.unknown, r.RequestID)
	l.touched[r.Key()] = true
}

// Unknown records a request whose outcome the client does not know.
func (l *Ledger) Unknown(r Request) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.unknown[r.RequestID] = r
	l.touched[r.Key()] = true
	l.unknownTotal++
}

// UnknownTotal counts every unknown outcome recorded so far, including
// those settled since: a test tells by it that a fault struck.
func (l *Ledger) UnknownTotal() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.unknownTotal
}

// Rejected records a request the service refused by a business rule
// (nothing appended, by contract).
func (l *Ledger) Rejected(r Request) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.rejected++
	delete(l.unknown, r.RequestID)
}

// Invalid records an answer the load never provokes (a 400, a 404, a
// malformed result): an audit problem, since the harness only sends valid
// commands.
func (l *Ledger) Invalid(r Request, res Response) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.unknown, r.RequestID)
	if len(l.invalid) < 20 {
		l.invalid = append(l.invalid, fmt.Sprintf("%s %s/%s/%s: HTTP %d %.300s", r.RequestID, r.Aggregate, r.ID, r.Command, res.Status, res.Body))
	}
}

// Invalids returns the unexpected answers recorded (at most 20).
func (l *Ledger) Invalids() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.invalid...)
}

// Acks returns a copy of the acknowledged requests.
func (l *Ledger) Acks() []Ack {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Ack(nil), l.acks...)
}

// Unknowns returns the requests still of unknown outcome, in request-ID
// order.
func (l *Ledger) Unknowns() []Request {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]Request, 0, len(l.unknown))
	for _, r := range l.unknown {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].RequestID < out[j].RequestID })
	return out
}

// Touched returns every aggregate a request went to, acknowledged or not,
// in order.
func (l *Ledger) Touched() []AggregateKey {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]AggregateKey, 0, len(l.touched))
	for k := range l.touched {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Aggregate != out[j].Aggregate {
			return out[i].Aggregate < out[j].Aggregate
		}
		return out[i].ID < out[j].ID
	})
	return out
}

// Counts returns the numbers of acknowledged, unknown and rejected
// requests.
func (l *Ledger) Counts() (acked, unknown, rejected int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.acks), len(l.unknown), l.rejected
}
