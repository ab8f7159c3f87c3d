package nats

import (
	"fmt"
	"testing"
	"time"
)

// Every instance's view lists the live instances with the partitions each
// holds, agreeing once the shares settle; a stopped instance's partitions
// move to the others in every view.
func TestEveryInstanceViewsTheCluster(t *testing.T) {
	url := startServer(t).ClientURL()
	c := newCluster(t, url, "factum_leases", 6)
	a, b, d := c.start("a"), c.start("b"), c.start("d")
	c.await(map[string]int{"a": 2, "b": 2, "d": 2})
	want := func(v ClusterView) string {
		return fmt.Sprint(v.Instances, v.Unowned)
	}
	settle := func(ins []*instance, names string) string {
		t.Helper()
		deadline := time.Now().Add(60 * testLease)
		for {
			views := make([]string, len(ins))
			agree := true
			for i, in := range ins {
				v := in.p.View()
				views[i] = want(v)
				if v.Context != "shop" || v.Partitions != 6 || v.Instance != in.name {
					t.Fatalf("view of %s: %+v", in.name, v)
				}
				got := ""
				for _, x := range v.Instances {
					got += x.Name
				}
				// A view follows the lease bucket's watch, so it may lag a
				// claim for a moment (a partition shown unowned): that is
				// "not yet", not a failure.
				agree = agree && views[i] == views[0] && got == names && len(v.Unowned) == 0
			}
			if agree {
				return views[0]
			}
			if time.Now().After(deadline) {
				t.Fatalf("views do not agree on %s: %v", names, views)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	v := settle([]*instance{a, b, d}, "abd")
	for _, in := range a.p.View().Instances {
		if !in.Alive || len(in.Partitions) != 2 {
			t.Fatalf("instance %+v in %s", in, v)
		}
	}
	if err := d.p.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	c.remove(d)
	c.await(map[string]int{"a": 3, "b": 3})
	settle([]*instance{a, b}, "ab")
}
