package eventstore

import (
	"context"
	"fmt"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/internal/built"
)

// DefaultPollInterval is how often, by default, the front end's generic
// WaitLog looks at the log of a backend without a [LogWaiter].
const DefaultPollInterval = 200 * time.Millisecond

// Config configures a front end. The zero value serves every bounded
// context with the defaults.
type Config struct {
	// Context, when set, is the one bounded context the store serves:
	// identities of any other are IllegalArgument (a SQL store's tables
	// hold one context). Empty: any context.
	Context string
	// PollInterval is how often WaitLog looks at the log when the backend
	// has no LogWaiter (default DefaultPollInterval). Appends through the
	// front end wake waiters at once regardless.
	PollInterval time.Duration
	// Name prefixes the front end's own errors ("sqlite", "postgres");
	// empty: "eventstore".
	Name string
	// TailStreams is how many of the log's latest streams, as its reads
	// found them, the front end keeps to answer ReadLog from: a full page
	// for any reader of the process, also a shorter one for a follower
	// (see Following) (default DefaultTailStreams, none for the memory
	// store; negative: none, every read goes to the backend). Consumer
	// groups at the log's end then share one backend read per append
	// instead of reading it each.
	TailStreams int
}

// Front is the event store's front end: the one implementation of the
// Store contract's checks over any [Backend]. It checks the context and
// the input before the backend sees them, turns the backend's refusals
// into the contract's errors (built from the caller's stream, so every
// backend reports the same codes and identities), chooses each operation's
// fast path or its generic fallback, and wakes its log waiters after every
// append.
//
// Backends apply it in their constructors, so users never meet the split:
// [NewMemory], sqlite.NewEventStore and postgres.NewEventStore return
// types that embed a Front and are Stores through it. A Front is safe for
// concurrent use.
type Front struct {
	b       Backend
	finder  RequestFinder    // nil: the fallback
	prober  RequestProber    // nil: finder, or its fallback
	byTime  TimeLoader       // nil: the fallback
	scanner AggregateScanner // nil: the fallback
	waiter  LogWaiter        // nil: the fallback
	group   GroupBackend     // nil: no group appends
	share   bool             // waiters at one position share a backend wait
	context string
	name    string
	poll    time.Duration
	woken   wakeup
	tail    tail
	waits   sharedWait
}

// New returns the front end over b. It refuses a negative PollInterval.
func New(b Backend, cfg Config) (*Front, error) {
	if b == nil {
		return nil, factum.IllegalArgument("eventstore: New: nil backend")
	}
	if cfg.PollInterval < 0 {
		return nil, factum.IllegalArgument("eventstore: Config.PollInterval must not be negative")
	}
	f := &Front{}
	f.init(b, cfg)
	return f, nil
}

// init sets f up over b; cfg is valid.
func (f *Front) init(b Backend, cfg Config) {
	f.b = b
	f.finder, _ = b.(RequestFinder)
	f.prober, _ = b.(RequestProber)
	f.byTime, _ = b.(TimeLoader)
	f.scanner, _ = b.(AggregateScanner)
	f.waiter, _ = b.(LogWaiter)
	f.group, _ = b.(GroupBackend)
	f.context = cfg.Context
	f.name = cfg.Name
	if f.name == "" {
		f.name = "eventstore"
	}
	f.poll = cfg.PollInterval
	if f.poll == 0 {
		f.poll = DefaultPollInterval
	}
	_, inMemory := b.(*memoryBackend)
	// A memory wait is a look at the log's length and a wait on woken:
	// sharing it would cost more than it saves.
	f.share = !inMemory
	switch {
	case cfg.TailStreams == 0 && !inMemory:
		// The memory log's reads copy from memory already, as the tail's
		// would; the tail saves the reads of a database.
		f.tail.max = DefaultTailStreams
	case cfg.TailStreams > 0:
		f.tail.max = cfg.TailStreams
	}
}

// Backend returns the backend under the front end, as database/sql's
// DB.Driver does: for contract kits and diagnostics. Calling it directly
// skips every check the front end makes.
func (f *Front) Backend() Backend { return f.b }

// serves refuses identities of another bounded context than the store's.
func (f *Front) serves(context string) error {
	if f.context != "" && context != f.context {
		return factum.IllegalArgument(fmt.Sprintf("%s: the event store of context %q cannot serve context %q", f.name, f.context, context))
	}
	return nil
}

// Append implements Store.
func (f *Front) Append(ctx context.Context, s *factum.EventStream) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := s.Validate(); err != nil {
		return err
	}
	return f.append(ctx, s)
}

// AppendBuilt is Append for a stream the aggregate executor built: of the
// stream's checks it makes only those that can fail for such a stream
// (see package internal/built). Outside this module no caller can build
// the argument.
func (f *Front) AppendBuilt(ctx context.Context, b built.Stream) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := b.Validate(); err != nil {
		return err
	}
	return f.append(ctx, b.Stream())
}

// BuiltOwner implements built.Appender: a type embedding f appends built
// streams only if it says so itself, as its Append may not be f's.
func (f *Front) BuiltOwner() built.Owner { return built.OwnedBy(f) }

// append is Append after the stream's checks.
func (f *Front) append(ctx context.Context, s *factum.EventStream) error {
	if err := f.serves(s.AggregateID.Context); err != nil {
		return err
	}
	o, err := f.b.Append(ctx, s)
	switch {
	case o == Appended && err == nil:
		f.tail.appended()
		f.woken.wake()
		return nil
	case err != nil:
		return err
	case o == Failed:
		return fmt.Errorf("%s: append %s version %d: the backend failed without saying why", f.name, s.AggregateID, s.Version)
	}
	return o.err(s)
}

// Load implements Store.
func (f *Front) Load(ctx context.Context, id factum.AggregateID, from, to int) ([]factum.EventStream, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := checkRange(from, to); err != nil {
		return nil, err
	}
	if err := f.serves(id.Context); err != nil {
		return nil, err
	}
	return f.b.Load(ctx, id, from, min(to, MaxVersion))
}

// LoadByTime implements Store.
func (f *Front) LoadByTime(ctx context.Context, id factum.AggregateID, start, end time.Time) ([]factum.EventStream, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if end.Before(start) {
		return nil, factum.IllegalArgument(fmt.Sprintf("time range [%v, %v): end is before start", start, end))
	}
	if err := f.serves(id.Context); err != nil {
		return nil, err
	}
	if f.byTime != nil {
		return f.byTime.LoadByTime(ctx, id, start, end)
	}
	return loadByTime(ctx, f.b, id, start, end)
}

// RequestExists implements Store.
func (f *Front) RequestExists(ctx context.Context, id factum.AggregateID, requestID string) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	if err := f.serves(id.Context); err != nil {
		return false, err
	}
	if f.prober != nil {
		return f.prober.HasRequest(ctx, id, requestID)
	}
	_, ok, err := f.find(ctx, id, requestID)
	return ok, err
}

// Lookup implements Store.
func (f *Front) Lookup(ctx context.Context, id factum.AggregateID, requestID string) (factum.EventStream, error) {
	if err := ctx.Err(); err != nil {
		return factum.EventStream{}, err
	}
	if err := f.serves(id.Context); err != nil {
		return factum.EventStream{}, err
	}
	s, ok, err := f.find(ctx, id, requestID)
	if err != nil {
		return factum.EventStream{}, err
	}
	if !ok {
		return factum.EventStream{}, NotFoundRequest(id, requestID)
	}
	return s, nil
}

func (f *Front) find(ctx context.Context, id factum.AggregateID, requestID string) (factum.EventStream, bool, error) {
	if f.finder != nil {
		return f.finder.FindRequest(ctx, id, requestID)
	}
	return findRequest(ctx, f.b, id, requestID)
}

// ScanAggregateIDs implements Store.
func (f *Front) ScanAggregateIDs(ctx context.Context, named factum.NamedAggregate, afterID string, limit int) ([]factum.AggregateID, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := checkLimit(limit); err != nil {
		return nil, err
	}
	if err := f.serves(named.Context); err != nil {
		return nil, err
	}
	if f.scanner != nil {
		return f.scanner.ScanAggregateIDs(ctx, named, afterID, limit)
	}
	return scanAggregateIDs(ctx, f.b, named, afterID, limit)
}

// ReadLog implements Store. Reads of the log's latest streams are
// answered from what an earlier read found, and followers at the log's
// end share one backend read (see Config.TailStreams and Following).
func (f *Front) ReadLog(ctx context.Context, after factum.Position, limit int) ([]factum.EventStream, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := checkLimit(limit); err != nil {
		return nil, err
	}
	return f.tail.read(ctx, f.b, after, limit)
}

// WaitLog implements Store. Appends through f wake it at once; what else
// wakes it is the backend's (a LogWaiter), or a look at the log every
// PollInterval. It returns at once when a read found a stream after the
// position. Waiters at the same position share one backend wait, except
// on a backend whose own wait is cheaper than sharing it (the memory
// store's): a waiter that joins one learns of a stream another process
// appended after the wait's last look at the wait's next look.
func (f *Front) WaitLog(ctx context.Context, after factum.Position) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	woken := f.woken.wait()
	if f.tail.ahead(after) {
		return nil // a read found a stream after it already
	}
	switch {
	case f.waiter != nil && f.share:
		return f.waits.wait(ctx, f.waiter, after, woken)
	case f.waiter != nil:
		return f.waiter.WaitLog(ctx, after, woken)
	}
	return waitLog(ctx, f.b, after, woken, f.poll)
}

var _ Store = (*Front)(nil)
