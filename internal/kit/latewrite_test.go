package kit_test

import (
	"slices"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/factum-go/factum/internal/kit"
)

// LateWrite without a hold passes the lease, reads, then writes; with one,
// the write starts before the lease ends and both outcomes arrive whether
// or not the read waits for the lock's release. The cases run in a
// synctest bubble, so LateWrite's waits take no real time, the write that
// its first wait lets start has started when the lease ends, and a
// LateWrite that waits for ever fails as a deadlock instead of hanging.
func TestLateWrite(t *testing.T) {
	for _, tc := range []struct {
		name      string
		hold      bool
		readWaits bool // the read waits on the held lock
		want      []string
	}{
		{"no hold", false, false, []string{"pass", "read", "write starts", "write"}},
		{"read does not wait", true, false, []string{"hold", "write starts", "pass", "read", "release", "write"}},
		{"read waits", true, true, []string{"hold", "write starts", "pass", "release", "read", "write"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var (
					mu       sync.Mutex
					order    []string
					released = make(chan struct{})
				)
				log := func(s string) {
					mu.Lock()
					defer mu.Unlock()
					order = append(order, s)
				}
				var hold func() func()
				if tc.hold {
					hold = func() func() {
						log("hold")
						return func() {
							log("release")
							close(released)
						}
					}
				}
				read := func() string {
					if tc.readWaits {
						<-released
					}
					log("read")
					return "found"
				}
				write := func() int {
					log("write starts")
					if tc.hold {
						<-released
					}
					log("write")
					return 7
				}
				r, w := kit.LateWrite(hold, func() { log("pass") }, read, write)
				if r != "found" || w != 7 {
					t.Fatalf("LateWrite = %q, %d; want the read's and the write's outcomes", r, w)
				}
				mu.Lock()
				defer mu.Unlock()
				if tc.readWaits && len(order) == len(tc.want) {
					// The read and the write both wait for the release: either may log first.
					slices.Sort(order[len(order)-2:])
				}
				if !slices.Equal(order, tc.want) {
					t.Fatalf("order %v, want %v", order, tc.want)
				}
			})
		})
	}
}
