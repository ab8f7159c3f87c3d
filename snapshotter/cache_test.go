package snapshotter

import (
	"fmt"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/snapshot"
)

func TestSnapCache(t *testing.T) {
	named := factum.NamedAggregate{Context: "shop", Aggregate: "cart"}
	entry := func(id, tenant string, version int) *snapEntry {
		return &snapEntry{snap: snapshot.Snapshot{AggregateID: named.WithID(id).WithTenant(tenant), Version: version}}
	}

	c := newSnapCache(3)
	c.keep(entry("a", factum.DefaultTenant, 1))
	if e := c.checkout(named.WithID("a")); e == nil || e.snap.Version != 1 {
		t.Fatalf("checkout of a kept entry (default tenant) = %+v", e)
	}
	if e := c.checkout(named.WithID("a")); e != nil {
		t.Fatalf("an entry checked out is still there: %+v", e)
	}

	c.keep(entry("b", "acme", 2))
	if e := c.checkout(named.WithID("b")); e != nil {
		t.Fatalf("checkout for another tenant = %+v, want none", e)
	}
	if e := c.checkout(named.WithID("b").WithTenant("acme")); e != nil {
		t.Fatalf("an entry of another tenant is dropped on a mismatch, still got %+v", e)
	}

	for i := range 10 {
		c.keep(entry(fmt.Sprint("k", i), factum.DefaultTenant, 1))
	}
	if len(c.m) != 3 {
		t.Fatalf("%d entries kept, limit 3", len(c.m))
	}
	kept := 0
	for i := range 10 {
		if c.checkout(named.WithID(fmt.Sprint("k", i))) != nil {
			kept++
		}
	}
	if kept != 3 {
		t.Fatalf("%d entries found, want 3", kept)
	}

	off := newSnapCache(-1)
	off.keep(entry("a", factum.DefaultTenant, 1))
	if e := off.checkout(named.WithID("a")); e != nil {
		t.Fatalf("a disabled cache kept %+v", e)
	}
}
