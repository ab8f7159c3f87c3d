package httpapi

import (
	"math"
	"strconv"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// DefaultRateLimitTenants bounds the tenants whose limiters are kept at
// once when RateLimit.MaxTenants is 0.
const DefaultRateLimitTenants = 10000

// RateLimit is a token bucket per tenant: PerSecond requests a second on
// average, bursts of Burst. PerSecond 0 means no limit. A request over the
// limit is 429 TooManyRequests with Retry-After (whole seconds).
type RateLimit struct {
	// PerSecond is the sustained rate; 0 disables the limit.
	PerSecond float64
	// Burst is the bucket size; 0 means max(1, PerSecond).
	Burst int
	// MaxTenants bounds the tenants tracked at once (idle ones are
	// forgotten first); 0 means DefaultRateLimitTenants. Beyond it, the
	// tenants not tracked share one bucket.
	MaxTenants int
}

// tenantLimits holds a limiter per tenant.
type tenantLimits struct {
	cfg      RateLimit
	mu       sync.Mutex
	byTenant map[string]*rate.Limiter
	overflow *rate.Limiter
}

func newTenantLimits(cfg RateLimit) *tenantLimits {
	if cfg.PerSecond <= 0 {
		return nil
	}
	if cfg.Burst <= 0 {
		cfg.Burst = max(1, int(math.Ceil(cfg.PerSecond)))
	}
	if cfg.MaxTenants <= 0 {
		cfg.MaxTenants = DefaultRateLimitTenants
	}
	return &tenantLimits{
		cfg: cfg, byTenant: map[string]*rate.Limiter{},
		overflow: rate.NewLimiter(rate.Limit(cfg.PerSecond), cfg.Burst),
	}
}

// allow takes a token of the tenant's bucket; when there is none it
// returns false and how long until there is.
func (l *tenantLimits) allow(tenant string) (time.Duration, bool) {
	if l == nil {
		return 0, true
	}
	now := time.Now()
	lim := l.limiter(tenant, now)
	res := lim.ReserveN(now, 1)
	if d := res.DelayFrom(now); d > 0 {
		res.CancelAt(now)
		return d, false
	}
	return 0, true
}

func (l *tenantLimits) limiter(tenant string, now time.Time) *rate.Limiter {
	l.mu.Lock()
	defer l.mu.Unlock()
	if lim, ok := l.byTenant[tenant]; ok {
		return lim
	}
	if len(l.byTenant) >= l.cfg.MaxTenants {
		// A full bucket is an idle tenant: forgetting it loses nothing.
		for t, lim := range l.byTenant {
			if lim.TokensAt(now) >= float64(l.cfg.Burst) {
				delete(l.byTenant, t)
			}
		}
		if len(l.byTenant) >= l.cfg.MaxTenants {
			return l.overflow
		}
	}
	lim := rate.NewLimiter(rate.Limit(l.cfg.PerSecond), l.cfg.Burst)
	l.byTenant[tenant] = lim
	return lim
}

// retryAfter renders d as Retry-After seconds, at least 1.
func retryAfter(d time.Duration) string {
	return strconv.Itoa(max(1, int(math.Ceil(d.Seconds()))))
}
