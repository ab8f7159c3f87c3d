package aggregate

import "context"

// CacheObserver learns, for each attempt at a command, whether the
// executor found the aggregate's state in its state cache (hit) or had
// to load it (miss: not cached, evicted, the cache disabled, or behind
// the version the command expects). It is called on the processing
// goroutine, so it must neither block nor allocate.
type CacheObserver interface {
	ObserveCache(hit bool)
}

type cacheObserverKey struct{}

// WithCacheObserver returns ctx carrying o: an executor handling a
// command in a context derived from it reports each cache lookup to o, as
// net/http/httptrace reports a request's connection events. A command
// middleware sets it for the commands it wraps.
func WithCacheObserver(ctx context.Context, o CacheObserver) context.Context {
	return context.WithValue(ctx, cacheObserverKey{}, o)
}

// CacheObserverFrom returns the observer WithCacheObserver put in ctx, or
// nil.
func CacheObserverFrom(ctx context.Context) CacheObserver {
	o, _ := ctx.Value(cacheObserverKey{}).(CacheObserver)
	return o
}

// ObservedContext is a context carrying a CacheObserver, as
// WithCacheObserver's is, for an observer that embeds it to travel with
// its context in one allocation: set Context to the parent and Observer
// to the observer, and pass a pointer to it as the context.
type ObservedContext struct {
	context.Context
	Observer CacheObserver
}

// Value returns the Observer for the key CacheObserverFrom looks up, and
// the parent's values for every other key.
func (c *ObservedContext) Value(key any) any {
	if key == (cacheObserverKey{}) {
		return c.Observer
	}
	return c.Context.Value(key)
}

// RetryObserver is a CacheObserver that also learns of each retry of a
// command: an executor's default Retry, or a Retry middleware, finding
// the CacheObserver in the context it runs a command in to be a
// RetryObserver calls ObserveRetry with the number of the attempt about
// to start (2 for the first retry) before each retry. A metric of
// retries counts them there, without keeping a count per command. It is
// called on the processing goroutine, so it must neither block nor
// allocate.
type RetryObserver interface {
	CacheObserver
	ObserveRetry(attempt int)
}

// observeRetry tells the RetryObserver in ctx, if any, that attempt is
// about to start.
func observeRetry(ctx context.Context, attempt int) {
	if o, ok := CacheObserverFrom(ctx).(RetryObserver); ok {
		o.ObserveRetry(attempt)
	}
}
