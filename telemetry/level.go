package telemetry

import "github.com/factum-go/factum"

// SpanLevel is how many spans a command's processing records. Every span
// costs the tracing SDK a few microseconds and an allocation or five, as
// much as a step of the processing it describes, so by default the hops
// of one command are events on its one span.
type SpanLevel uint8

const (
	// SpansPerCommand records one span per command processed (the
	// processor's, "factum.process <type>"), one per event function
	// handling a stream, and one per HTTP request. The command's hops are
	// events on its span, each marking the end of its step, where the
	// span does not already tell it: factum.load (a state-cache miss),
	// factum.effects (a handler that bound effects), factum.decide and
	// factum.append when they failed (the span's end marks a decision
	// and an append that succeeded), and factum.retry as each retry
	// begins; a failed step's event carries its factum.code. The bus hop is a
	// factum.send event on the sender's span (an HTTP request, an event
	// function), when it has one. The event store's calls outside a
	// command's processing (a read by an HTTP handler) are spans still.
	SpansPerCommand SpanLevel = iota
	// SpansDetailed records every hop as a span of its own: the bus hop
	// (factum.send, producer, parent of the processor's span), the load,
	// decide and effects steps (children of the processor's span) and
	// each event store call (factum.store <Operation>, client). A version
	// conflict is a factum.append.conflict event on the processor's span
	// and a retry a factum.retry event.
	SpansDetailed
)

// String returns the level's name: per-command or detailed.
func (l SpanLevel) String() string {
	switch l {
	case SpansPerCommand:
		return "per-command"
	case SpansDetailed:
		return "detailed"
	}
	return "unknown"
}

// ParseSpanLevel returns the level named s: "per-command" (or "") or
// "detailed".
func ParseSpanLevel(s string) (SpanLevel, error) {
	switch s {
	case "", "per-command":
		return SpansPerCommand, nil
	case "detailed":
		return SpansDetailed, nil
	}
	return 0, factum.IllegalArgument("telemetry: span level " + s + " is neither per-command nor detailed")
}
