package event

import (
	"fmt"
	"time"

	"github.com/factum-go/factum"
)

// Settings are the consumer settings one processor carries with its
// definition. A zero field leaves the consumer's Config (the engine's
// Events) as it is; a set one overrides it for this processor's consumer
// only.
type Settings struct {
	// Attempts overrides Config.Attempts.
	Attempts int
	// Backoff overrides Config.Backoff.
	Backoff time.Duration
	// HandlerTimeout overrides Config.HandlerTimeout.
	HandlerTimeout time.Duration
	// BatchSize overrides Config.BatchSize.
	BatchSize int
	// PollInterval overrides Config.PollInterval.
	PollInterval time.Duration
	// Concurrency overrides Config.Concurrency (see its conditions).
	Concurrency int
}

// WithSettings gives the processor its own consumer settings (see
// Settings); NewConsumer applies them over its Config. A negative field is
// an IllegalArgument error.
func WithSettings(s Settings) Option {
	return func(p *Processor) error {
		if s.Attempts < 0 || s.Backoff < 0 || s.HandlerTimeout < 0 || s.BatchSize < 0 || s.PollInterval < 0 || s.Concurrency < 0 {
			return factum.IllegalArgument(fmt.Sprintf("processor %s/%s: negative consumer setting %+v", p.context, p.name, s))
		}
		p.settings = s
		return nil
	}
}

// Settings returns the consumer settings the processor carries.
func (p *Processor) Settings() Settings { return p.settings }

// apply overrides cfg's fields by the set fields of s.
func (s Settings) apply(cfg Config) Config {
	set := func(dst *int, v int) {
		if v != 0 {
			*dst = v
		}
	}
	setD := func(dst *time.Duration, v time.Duration) {
		if v != 0 {
			*dst = v
		}
	}
	set(&cfg.Attempts, s.Attempts)
	setD(&cfg.Backoff, s.Backoff)
	setD(&cfg.HandlerTimeout, s.HandlerTimeout)
	set(&cfg.BatchSize, s.BatchSize)
	setD(&cfg.PollInterval, s.PollInterval)
	set(&cfg.Concurrency, s.Concurrency)
	return cfg
}
