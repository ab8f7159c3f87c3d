package order

import (
	"context"
	"slices"
	"strings"
	"sync"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/event"
)

// Summary is one order as the summaries projection shows it.
type Summary struct {
	OrderID string `json:"orderId"`
	Tenant  string `json:"tenant"`
	SKU     string `json:"sku"`
	Qty     int    `json:"qty"`
	Status  Status `json:"status"`
	Reason  string `json:"reason,omitempty"`
	Version int    `json:"version"`
}

// Summaries is an in-memory projection of orders. Updates are keyed by
// order and guarded by the stream version, so a redelivered stream changes
// nothing: the projection is idempotent by construction.
type Summaries struct {
	mu sync.RWMutex
	m  map[string]Summary
}

// NewSummaries returns an empty projection.
func NewSummaries() *Summaries { return &Summaries{m: map[string]Summary{}} }

// Get returns the summary of an order.
func (s *Summaries) Get(orderID string) (Summary, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	v, ok := s.m[orderID]
	return v, ok
}

// List returns every summary, by order ID.
func (s *Summaries) List() []Summary {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]Summary, 0, len(s.m))
	for _, v := range s.m {
		out = append(out, v)
	}
	slices.SortFunc(out, func(a, b Summary) int { return strings.Compare(a.OrderID, b.OrderID) })
	return out
}

// update applies fn to the order's summary if the stream is newer.
func (s *Summaries) update(m event.Message, fn func(*Summary)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := m.Stream.AggregateID
	v := s.m[id.ID]
	if v.Version >= m.Stream.Version {
		return
	}
	v.OrderID, v.Tenant, v.Version = id.ID, id.Tenant, m.Stream.Version
	fn(&v)
	s.m[id.ID] = v
}

// Processor returns the projection as an event processor signalling
// PROJECTED. The engine binds it to its codec registry, which decodes the
// events.
func (s *Summaries) Processor() (*event.Processor, error) {
	from := event.From(Orders.Named())
	return event.NewProcessor(Context, "order_summaries", factum.StageProjected,
		event.On(func(_ context.Context, m event.Message, e OrderPlaced) error {
			s.update(m, func(v *Summary) { v.SKU, v.Qty, v.Status = e.SKU, e.Qty, Pending })
			return nil
		}, from),
		event.On(func(_ context.Context, m event.Message, _ OrderConfirmed) error {
			s.update(m, func(v *Summary) { v.Status = Confirmed })
			return nil
		}, from),
		event.On(func(_ context.Context, m event.Message, e OrderRejected) error {
			s.update(m, func(v *Summary) { v.Status, v.Reason = Rejected, e.Reason })
			return nil
		}, from),
	)
}
