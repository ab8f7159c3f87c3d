package nats

import "slices"

// ClusterView is the cluster as one instance sees it in the lease bucket:
// the live instances and the partitions each holds. Instances see the
// same bucket, so their views agree once the leases settle; while a
// partition changes hands they may differ for up to a lease.
type ClusterView struct {
	// Context is the partitioned bounded context.
	Context string `json:"context"`
	// Partitions is the number of partitions.
	Partitions int `json:"partitions"`
	// LeaseMillis is the partition lease's length in milliseconds.
	LeaseMillis int64 `json:"leaseMillis"`
	// Instance is the instance that made the view.
	Instance string `json:"instance"`
	// Instances lists the instances, by name: those announced within a
	// lease, and any still named in a partition's lease.
	Instances []InstanceView `json:"instances"`
	// Unowned lists the partitions no lease names: their commands are
	// stored and wait on the stream until an instance claims them.
	Unowned []int `json:"unowned"`
}

// InstanceView is one instance of a ClusterView.
type InstanceView struct {
	// Name is the instance's name.
	Name string `json:"name"`
	// Alive says it announced itself within a lease (always, for the
	// instance that made the view).
	Alive bool `json:"alive"`
	// Partitions lists the partitions its leases hold, as the bucket
	// shows them; for the instance that made the view, those it owns now.
	Partitions []int `json:"partitions"`
}

// View returns the cluster as p sees it now.
func (p *Partitions) View() ClusterView {
	owned := p.Owned()
	owners := p.Owners()
	alive := p.Instances()
	v := ClusterView{Context: p.cfg.Context, Partitions: p.cfg.Partitions, LeaseMillis: p.cfg.Lease.Milliseconds(), Instance: p.cfg.Instance,
		Instances: []InstanceView{}, Unowned: []int{}}
	byName := map[string]*InstanceView{}
	add := func(name string, live bool) *InstanceView {
		in := byName[name]
		if in == nil {
			in = &InstanceView{Name: name, Partitions: []int{}}
			byName[name] = in
		}
		in.Alive = in.Alive || live
		return in
	}
	for _, name := range alive {
		add(name, true)
	}
	add(p.cfg.Instance, true).Partitions = append([]int{}, owned...)
	for n := range p.cfg.Partitions {
		o, ok := owners[n]
		switch {
		case !ok && !slices.Contains(owned, n):
			v.Unowned = append(v.Unowned, n)
		case ok && o != p.cfg.Instance:
			in := add(o, false)
			in.Partitions = append(in.Partitions, n)
		}
	}
	for _, in := range byName {
		v.Instances = append(v.Instances, *in)
	}
	slices.SortFunc(v.Instances, func(a, b InstanceView) int {
		switch {
		case a.Name < b.Name:
			return -1
		case a.Name > b.Name:
			return 1
		}
		return 0
	})
	return v
}
