package telemetry

import (
	"sync"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/aggregate"
	"go.opentelemetry.io/otel/attribute"
)

// maxSpanAttrs bounds a span's own attributes. The SDK copies each into
// the span, deduplicates them through a map at the end and hands them to
// the exporter: the attributes a span repeats from its parent or its kind
// (messaging.destination.name, messaging.operation.type) are left out,
// and the constant one (messaging.system) is the instrumentation scope's.
const maxSpanAttrs = 8

// attrBuf is scratch space for the attributes handed to SetAttributes,
// which copies them: a variadic slice passed to an interface method is
// otherwise allocated per call.
type attrBuf struct {
	kv [maxSpanAttrs + 2]attribute.KeyValue
}

var attrBufs = sync.Pool{New: func() any { return new(attrBuf) }}

// getAttrs returns a scratch buffer from the pool; putAttrs clears it
// (the pool holds no strings of past commands) and returns it.
func getAttrs() *attrBuf { return attrBufs.Get().(*attrBuf) }

func putAttrs(b *attrBuf) {
	clear(b.kv[:])
	attrBufs.Put(b)
}

// typeNames are the span names and the attribute of one aggregate type,
// made once.
type typeNames struct {
	send    string
	process string
	// phase holds the detailed level's span names of the processing's
	// steps, by aggregate.Phase.
	phase [aggregate.PhaseAppend + 1]string
	agg   attribute.KeyValue
}

func newTypeNames(named factum.NamedAggregate) *typeNames {
	agg := named.String()
	n := &typeNames{send: "factum.send " + agg, process: "factum.process " + agg, agg: AttrAggregate.String(agg)}
	for p := aggregate.PhaseLoad; p <= aggregate.PhaseAppend; p++ {
		n.phase[p] = "factum." + p.String() + " " + agg
	}
	return n
}

// maxTypeNames bounds the aggregate types whose names are kept: the
// types are the registered ones, but a bus may be handed a command of any
// type, and the cache is never to grow with what callers send.
const maxTypeNames = 1024

// names returns the names of named's spans, made at its first command.
func (t *Telemetry) names(named factum.NamedAggregate) *typeNames {
	if n, ok := t.typeNames.Load(named); ok {
		return n.(*typeNames)
	}
	n := newTypeNames(named)
	if t.typeNameCount.Load() >= maxTypeNames {
		return n
	}
	if got, loaded := t.typeNames.LoadOrStore(named, n); loaded {
		return got.(*typeNames)
	}
	t.typeNameCount.Add(1)
	return n
}
