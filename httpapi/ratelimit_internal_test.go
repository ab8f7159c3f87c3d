package httpapi

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
)

// Concurrent requests of one tenant get exactly the burst when the rate
// refills nothing during the test; another tenant's bucket is untouched.
func TestTenantLimitsConcurrentBurst(t *testing.T) {
	l := newTenantLimits(RateLimit{PerSecond: 1e-6, Burst: 25})
	var allowed atomic.Int64
	var wg sync.WaitGroup
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 4 {
				if d, ok := l.allow("acme"); ok {
					allowed.Add(1)
				} else if d <= 0 {
					t.Errorf("refused with a delay of %s", d)
				}
			}
		}()
	}
	wg.Wait()
	if n := allowed.Load(); n != 25 {
		t.Fatalf("%d of 200 allowed, want the burst of 25", n)
	}
	if _, ok := l.allow("globex"); !ok {
		t.Fatal("another tenant was refused")
	}
}

// The limiter's memory is bounded: idle tenants are forgotten, and beyond
// the bound the untracked tenants share one bucket.
func TestTenantLimitsBounded(t *testing.T) {
	l := newTenantLimits(RateLimit{PerSecond: 1e-6, Burst: 1, MaxTenants: 10})
	for i := range 100 {
		l.allow(fmt.Sprintf("t-%d", i))
	}
	if n := len(l.byTenant); n > 10 {
		t.Fatalf("%d tenants tracked, bound 10", n)
	}
	if newTenantLimits(RateLimit{}) != nil {
		t.Fatal("a zero rate limits")
	}
	if _, ok := (*tenantLimits)(nil).allow("x"); !ok {
		t.Fatal("no limiter refused")
	}
}
