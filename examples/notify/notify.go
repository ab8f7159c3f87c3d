package notify

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/examples/user"
)

// Context and Processor name the welcome-mail function's processor.
const (
	Context   = user.Context
	Processor = "notifications"
)

// DefaultDeferrals is how many deliveries to a new recipient a greylisting
// domain defers by default: the consumers' default in-place attempts, so
// the first retry by compensation delivers.
const DefaultDeferrals = 3

// Mail is one sent message.
type Mail struct {
	// ID is the ID of the event the mail is for; a mail is sent once per ID.
	ID      string `json:"id"`
	To      string `json:"to"`
	Subject string `json:"subject"`
}

// RelayConfig configures a Relay. The zero value greylists
// greylist.example with DefaultDeferrals.
type RelayConfig struct {
	// Greylisting are the domains that defer the first deliveries to each
	// new recipient; nil means greylist.example.
	Greylisting []string
	// Deferrals is how many deliveries to a recipient such a domain
	// defers; 0 means DefaultDeferrals.
	Deferrals int
}

// Relay is a stub mail relay, safe for concurrent use.
type Relay struct {
	greylisting []string
	deferrals   int

	mu       sync.Mutex
	attempts map[string]int // deliveries tried per recipient
	sent     []Mail
	seen     map[string]bool // mail IDs sent
}

// NewRelay returns a relay; a negative Deferrals or a blank domain is
// IllegalArgument.
func NewRelay(cfg RelayConfig) (*Relay, error) {
	if cfg.Deferrals < 0 {
		return nil, factum.IllegalArgument("notify: negative Deferrals")
	}
	if cfg.Deferrals == 0 {
		cfg.Deferrals = DefaultDeferrals
	}
	if cfg.Greylisting == nil {
		cfg.Greylisting = []string{"greylist.example"}
	}
	doms := make([]string, len(cfg.Greylisting))
	for i, d := range cfg.Greylisting {
		d = strings.ToLower(strings.TrimSpace(d))
		if d == "" {
			return nil, factum.IllegalArgument("notify: blank greylisting domain")
		}
		doms[i] = d
	}
	return &Relay{greylisting: doms, deferrals: cfg.Deferrals, attempts: map[string]int{}, seen: map[string]bool{}}, nil
}

// Send delivers m: nil once it is sent (or was sent before under its ID),
// IllegalArgument for an address that cannot receive mail (no domain, or
// a domain under .invalid), TooManyRequests while a greylisting domain
// defers it, and ctx's error when ctx is done.
func (r *Relay) Send(ctx context.Context, m Mail) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	_, domain, ok := strings.Cut(strings.ToLower(m.To), "@")
	if !ok || domain == "" {
		return factum.IllegalArgument(fmt.Sprintf("550 5.1.3 bad recipient address %q", m.To))
	}
	if domain == "invalid" || strings.HasSuffix(domain, ".invalid") {
		return factum.IllegalArgument(fmt.Sprintf("550 5.1.2 %s: domain does not accept mail", m.To))
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.seen[m.ID] {
		return nil
	}
	if slices.Contains(r.greylisting, domain) {
		key := strings.ToLower(m.To)
		r.attempts[key]++
		if n := r.attempts[key]; n <= r.deferrals {
			return factum.NewError(factum.CodeTooManyRequests,
				fmt.Sprintf("451 4.7.1 %s: greylisted, try again later (deferral %d of %d)", m.To, n, r.deferrals))
		}
	}
	r.seen[m.ID] = true
	r.sent = append(r.sent, m)
	return nil
}

// Sent returns the mails sent so far, in order.
func (r *Relay) Sent() []Mail {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.sent)
}

// Welcome returns the processor ("shop", "notifications", signalling
// EVENT_HANDLED) whose function on_user_registered mails every newly
// registered user of users through relay.
func Welcome(relay *Relay, users factum.NamedAggregate) (*event.Processor, error) {
	if relay == nil {
		return nil, factum.IllegalArgument("notify: nil relay")
	}
	return event.NewProcessor(Context, Processor, factum.StageEventHandled,
		event.On(func(ctx context.Context, m event.Message, e user.UserRegistered) error {
			return relay.Send(ctx, Mail{ID: m.Event.ID, To: e.Email, Subject: "Welcome, " + e.Username})
		}, event.From(users)),
	)
}
