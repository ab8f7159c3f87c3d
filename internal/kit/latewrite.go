package kit

import "time"

// LateWrite races an owner's write against the end of its lease, as the
// lapse cases of idempotencytest and preparetest do, and returns what read
// found and what write returned.
//
// With hold nil, the write comes after the lease ends and read looks:
// pass, read, write, in that order. Otherwise hold takes the backend's
// lock on the record and returns its release; write starts and waits on
// the lock, the lease ends (pass), and read starts. A backend whose reads
// do not wait on the lock answers read while the write still waits; one
// whose reads do wait answers after release, and after the write.
func LateWrite[R, W any](hold func() (release func()), pass func(), read func() R, write func() W) (R, W) {
	if hold == nil {
		pass()
		r := read()
		return r, write()
	}
	release := hold()
	wch := make(chan W, 1)
	go func() { wch <- write() }()
	time.Sleep(50 * time.Millisecond) // the write starts and waits on the lock
	pass()
	rch := make(chan R, 1)
	go func() { rch <- read() }()
	select {
	case r := <-rch: // a backend whose reads do not wait
		release()
		return r, <-wch
	case <-time.After(200 * time.Millisecond): // one whose reads wait on the lock
	}
	release()
	w := <-wch
	return <-rch, w
}
