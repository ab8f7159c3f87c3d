package nats

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/command"
	natsgo "github.com/nats-io/nats.go"
)

// DefaultSignalPrefix is the subject prefix of wait signals: an instance
// receives the signals of the commands it sent on prefix.<instance>.
const DefaultSignalPrefix = "factum.signal"

// SignalsConfig configures Signals. Conn and Instance are required.
type SignalsConfig struct {
	// Conn is the NATS connection signals travel on: the instance's one
	// authenticated connection, the same as its bus's.
	Conn *natsgo.Conn
	// Instance names this instance: its signals arrive on
	// Prefix.Instance. It must be one NATS subject token (letters, digits,
	// '-' and '_'), unique among the live instances, and the name its
	// commands carry in factum.OriginHeader.
	Instance string
	// Prefix is the subjects' prefix; DefaultSignalPrefix if empty.
	// Every instance of a service must use the same.
	Prefix string
	// Logger receives the signals that could not be sent or read
	// (default slog.Default()).
	Logger *slog.Logger
}

// Signals carries wait signals between instances over NATS: a signal for
// a command another instance sent (factum.Signal.Origin names it) is
// published on that instance's subject, and the signals published on this
// instance's subject are delivered into its local waiters. A signal for a
// command this instance sent, or one naming no instance, stays in the
// process: no network. A signal for another instance whose wait cannot use
// it (factum.Signal.OriginWait, from the command's
// factum.OriginWaitHeader; see command.WaitUses) is not published, and is
// counted: a wait for PROCESSED gets no branch-stage signal, one for SENT
// none at all.
//
// Delivery is at most once, like the in-process sink's: a signal for an
// instance that is gone, or one NATS cannot take, is dropped and counted,
// and the wait it belonged to ends as a RequestTimeout whose outcome the
// event store answers (the gateway's Lookup, from any instance). Timeouts
// stay the caller's, at the instance it called.
//
// Signals is safe for concurrent use. Use Sink as engine.Config.Signals,
// Bus around engine.Config.Bus, and Close after the engine's Shutdown.
type Signals struct {
	cfg     SignalsConfig
	subject string

	mu    sync.Mutex // guards sub and the setting of local
	local atomic.Pointer[command.Sink]
	sub   *natsgo.Subscription

	sent, received, dropped, localOnly, unwaited atomic.Uint64
}

// SignalStats counts the signals an instance has routed.
type SignalStats struct {
	// Local is how many stayed in the process.
	Local uint64 `json:"local"`
	// Sent is how many were published to another instance.
	Sent uint64 `json:"sent"`
	// Received is how many arrived from other instances.
	Received uint64 `json:"received"`
	// Dropped is how many could not be published or decoded.
	Dropped uint64 `json:"dropped"`
	// Unwaited is how many, for another instance, were not published
	// because the wait there cannot use them (see
	// factum.OriginWaitHeader).
	Unwaited uint64 `json:"unwaited"`
}

// NewSignals checks cfg and returns the instance's signal transport; it
// receives nothing until Sink subscribes.
func NewSignals(cfg SignalsConfig) (*Signals, error) {
	if cfg.Conn == nil {
		return nil, factum.IllegalArgument("nats: SignalsConfig.Conn is required")
	}
	if err := ValidateInstance(cfg.Instance); err != nil {
		return nil, err
	}
	if cfg.Prefix == "" {
		cfg.Prefix = DefaultSignalPrefix
	}
	if err := validSubject(cfg.Prefix); err != nil {
		return nil, factum.IllegalArgument(fmt.Sprintf("nats: signal prefix %q: %v", cfg.Prefix, err))
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Signals{cfg: cfg, subject: SignalSubject(cfg.Prefix, cfg.Instance)}, nil
}

// SignalSubject returns the subject on which instance receives its wait
// signals.
func SignalSubject(prefix, instance string) string { return prefix + "." + instance }

// ValidateInstance checks that name can name an instance: a non-empty NATS
// subject token of letters, digits, '-' and '_', at most 64 bytes.
func ValidateInstance(name string) error {
	if name == "" || len(name) > 64 {
		return factum.IllegalArgument(fmt.Sprintf("nats: instance name %q must have 1 to 64 characters", name))
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return factum.IllegalArgument(fmt.Sprintf("nats: instance name %q may hold only letters, digits, '-' and '_'", name))
		}
	}
	return nil
}

// validSubject checks a subject of literal tokens.
func validSubject(s string) error {
	if s == "" {
		return fmt.Errorf("empty")
	}
	for _, tok := range strings.Split(s, ".") {
		if tok == "" || strings.ContainsAny(tok, " \t\r\n*>") {
			return fmt.Errorf("token %q is empty or holds a wildcard or a space", tok)
		}
	}
	return nil
}

// Instance returns the instance's name.
func (s *Signals) Instance() string { return s.cfg.Instance }

// Subject returns the subject this instance receives its signals on.
func (s *Signals) Subject() string { return s.subject }

// Sink subscribes to this instance's subject, delivering what arrives
// into local (the engine's waiters), and returns the sink the engine's
// executors and event functions emit into: s itself. Its signature is
// engine.Config.Signals's. It may be called once.
func (s *Signals) Sink(local command.Sink) (command.Sink, error) {
	if local == nil {
		return nil, factum.IllegalArgument("nats: Signals.Sink needs the local sink")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.local.Load() != nil {
		return nil, factum.IllegalState("nats: Signals.Sink was called already")
	}
	// Set before the subscription, so that the first signal to arrive
	// finds it.
	s.local.Store(&local)
	sub, err := s.cfg.Conn.Subscribe(s.subject, s.receive)
	if err != nil {
		s.local.Store(nil)
		return nil, fmt.Errorf("nats: subscribe to %s: %w", s.subject, err)
	}
	// The handler only decodes and hands over: never a reason to drop for
	// slowness below these bounds.
	if err := sub.SetPendingLimits(1<<20, 256<<20); err != nil {
		s.local.Store(nil)
		return nil, errors.Join(fmt.Errorf("nats: pending limits of %s: %w", s.subject, err), sub.Unsubscribe())
	}
	// The subscription must be in force at the server before this
	// instance sends a command whose signals come back on it.
	if err := s.cfg.Conn.Flush(); err != nil {
		s.local.Store(nil)
		return nil, errors.Join(fmt.Errorf("nats: subscribe to %s: %w", s.subject, err), sub.Unsubscribe())
	}
	s.sub = sub
	return s, nil
}

// Signal implements command.Sink: it delivers sig locally when this
// instance sent its command (or it names none), and publishes it on the
// origin's subject otherwise, unless the wait there cannot use it
// (command.WaitUses of its OriginWait and Stage). It never waits for the
// network: the connection buffers what it publishes (also while it
// reconnects, up to its reconnect buffer), and what it cannot take is
// dropped and counted.
func (s *Signals) Signal(sig factum.Signal) {
	if sig.Origin == "" || sig.Origin == s.cfg.Instance {
		s.localOnly.Add(1)
		if l := s.localSink(); l != nil {
			l.Signal(sig)
		}
		return
	}
	if ValidateInstance(sig.Origin) != nil {
		s.dropped.Add(1)
		s.cfg.Logger.Warn("nats: wait signal for an invalid origin dropped", "origin", sig.Origin, "command", sig.CommandID)
		return
	}
	if !command.WaitUses(sig.OriginWait, sig.Stage) {
		s.unwaited.Add(1)
		return
	}
	b, err := json.Marshal(sig)
	if err == nil {
		err = s.cfg.Conn.Publish(SignalSubject(s.cfg.Prefix, sig.Origin), b)
	}
	if err != nil {
		s.dropped.Add(1)
		s.cfg.Logger.Warn("nats: wait signal not sent", "origin", sig.Origin, "command", sig.CommandID, "stage", sig.Stage, "error", err)
		return
	}
	s.sent.Add(1)
}

// HeaderSignals marks a message on a signal subject that carries several
// signals: its value is how many, its body their binary encoding (see
// WireVersion), in the order they were emitted. A message without it
// carries one signal, a JSON object.
const HeaderSignals = "Factum-Signals"

// SignalOriginBatch routes sigs, signals of commands that origin sent, in
// order: as Signal does each, but, for another instance, as one message
// (see HeaderSignals) when they fit in one, so that a run's signals cost
// the network one message. It implements OriginBatchSink.
func (s *Signals) SignalOriginBatch(origin string, sigs []factum.Signal) {
	remote := origin != "" && origin != s.cfg.Instance && ValidateInstance(origin) == nil
	if remote {
		sigs = s.waited(sigs)
	}
	if len(sigs) < 2 || !remote {
		for _, sig := range sigs {
			s.SignalOrigin(origin, sig)
		}
		return
	}
	b, err := encodeSignals(sigs)
	if err != nil || int64(len(b)) > s.cfg.Conn.MaxPayload()-1024 {
		// Too large for one message, or one of them does not encode: one
		// each, as Signal sends them, so that only such a one is dropped.
		for _, sig := range sigs {
			s.SignalOrigin(origin, sig)
		}
		return
	}
	err = s.cfg.Conn.PublishMsg(&natsgo.Msg{
		Subject: SignalSubject(s.cfg.Prefix, origin),
		Header:  natsgo.Header{HeaderSignals: []string{strconv.Itoa(len(sigs))}},
		Data:    b,
	})
	if err != nil {
		s.dropped.Add(uint64(len(sigs)))
		s.cfg.Logger.Warn("nats: wait signals not sent", "origin", origin, "signals", len(sigs), "first", sigs[0].CommandID, "error", err)
		return
	}
	s.sent.Add(uint64(len(sigs)))
}

// waited returns the signals of sigs, for another instance, that the
// waits there can use (see Signal), counting the others: sigs itself
// when it is all of them, else a copy, sigs being the caller's.
func (s *Signals) waited(sigs []factum.Signal) []factum.Signal {
	for i := range sigs {
		if command.WaitUses(sigs[i].OriginWait, sigs[i].Stage) {
			continue
		}
		kept := slices.Clone(sigs[:i])
		for _, sig := range sigs[i:] {
			if command.WaitUses(sig.OriginWait, sig.Stage) {
				kept = append(kept, sig)
			}
		}
		s.unwaited.Add(uint64(len(sigs) - len(kept)))
		return kept
	}
	return sigs
}

// SignalOrigin routes sig to origin, the instance that sent its command,
// as Signal does with sig.Origin set to it: a bus that knows a command's
// origin from its message (the JetStream bus's OriginSink) calls it.
func (s *Signals) SignalOrigin(origin string, sig factum.Signal) {
	if origin != "" {
		sig.Origin = origin
	}
	s.Signal(sig)
}

// localSink returns the local sink, nil before Sink: read per signal, so
// without the lock.
func (s *Signals) localSink() command.Sink {
	if l := s.local.Load(); l != nil {
		return *l
	}
	return nil
}

// receive delivers a signal from another instance into the local sink,
// or, from a message that carries several (see HeaderSignals), each of
// them, in order.
func (s *Signals) receive(m *natsgo.Msg) {
	if count := m.Header.Get(HeaderSignals); count != "" {
		s.receiveBatch(m, count)
		return
	}
	var sig factum.Signal
	if err := json.Unmarshal(m.Data, &sig); err != nil {
		s.dropped.Add(1)
		s.cfg.Logger.Warn("nats: undecodable wait signal dropped", "subject", m.Subject, "error", err)
		return
	}
	s.received.Add(1)
	if l := s.localSink(); l != nil {
		l.Signal(sig)
	}
}

// receiveBatch is receive for a message of several signals, count of
// them by its header.
func (s *Signals) receiveBatch(m *natsgo.Msg, count string) {
	hint, _ := strconv.Atoi(count)
	sigs, err := decodeSignals(m.Data, hint)
	if err == nil && strconv.Itoa(len(sigs)) != count {
		err = fmt.Errorf("%d signals, the header says %s", len(sigs), count)
	}
	if err != nil {
		s.dropped.Add(droppedOf(count, len(m.Data), len(sigs)))
		s.cfg.Logger.Warn("nats: undecodable wait signals dropped", "subject", m.Subject, "error", err)
		return
	}
	s.received.Add(uint64(len(sigs)))
	if l := s.localSink(); l != nil {
		for _, sig := range sigs {
			l.Signal(sig)
		}
	}
}

// droppedOf is how many signals a malformed batch counts as dropped: the
// count its header says when that is a number from 1 to size, the body's
// length in bytes (the encoding of n signals takes more than n bytes), so
// that a header out of range never adds more than the message could have
// carried; else the decoded ones, at least one.
func droppedOf(count string, size, decoded int) uint64 {
	if n, err := strconv.Atoi(count); err == nil && n >= 1 && n <= size {
		return uint64(n)
	}
	return uint64(max(decoded, 1))
}

// Stats returns the counts of signals routed so far.
func (s *Signals) Stats() SignalStats {
	return SignalStats{Local: s.localOnly.Load(), Sent: s.sent.Load(), Received: s.received.Load(), Dropped: s.dropped.Load(), Unwaited: s.unwaited.Load()}
}

// Close unsubscribes: signals for this instance are no longer received.
// Signals it emits afterwards are still routed. Close is idempotent.
func (s *Signals) Close() error {
	s.mu.Lock()
	sub := s.sub
	s.sub = nil
	s.mu.Unlock()
	if sub == nil || s.cfg.Conn.IsClosed() {
		return nil
	}
	if err := sub.Unsubscribe(); err != nil && !errors.Is(err, natsgo.ErrConnectionClosed) {
		return fmt.Errorf("nats: unsubscribe from %s: %w", s.subject, err)
	}
	return nil
}
