package nats

import (
	"encoding/json"
	"fmt"

	"github.com/factum-go/factum"
	"google.golang.org/protobuf/encoding/protowire"
)

// The fields of a signal batch's body, after WireVersion: the defaults
// its signals share (those of its first signal: the signals of a batch
// are usually one aggregate's, at one stage, of one function, and mostly
// of one code), then each signal, in order.
const (
	sigsAggregateID protowire.Number = 1
	sigsStage       protowire.Number = 2
	sigsFunction    protowire.Number = 3
	sigsCode        protowire.Number = 4
	sigsSignal      protowire.Number = 5
)

// The fields of one signal. Stage, AggregateID, Function and Code are
// written when they differ from the batch's defaults; RequestID when it
// differs from CommandID (even empty); the others when not zero.
const (
	sigStage            protowire.Number = 1
	sigCommandID        protowire.Number = 2
	sigRequestID        protowire.Number = 3
	sigAggregateID      protowire.Number = 4
	sigAggregateVersion protowire.Number = 5
	sigFunction         protowire.Number = 6
	sigEventNames       protowire.Number = 7
	sigCode             protowire.Number = 8
	sigMessage          protowire.Number = 9
	sigBindings         protowire.Number = 10
	sigResults          protowire.Number = 11
	sigDuplicate        protowire.Number = 12
	sigNote             protowire.Number = 13
	sigSignalTime       protowire.Number = 14
)

// The fields of a function and of a binding error.
const (
	fnContext   protowire.Number = 1
	fnProcessor protowire.Number = 2
	fnName      protowire.Number = 3

	bindField   protowire.Number = 1
	bindMessage protowire.Number = 2
)

// encodeSignals returns the body of a message of sigs (see HeaderSignals):
// WireVersion and their binary encoding. Every field but Origin travels;
// Results as its JSON, the one field whose values have no fixed type. It
// fails, as JSON does, for a signal of an invalid stage or whose Results
// has no JSON.
func encodeSignals(sigs []factum.Signal) ([]byte, error) {
	if len(sigs) == 0 {
		return []byte{WireVersion}, nil
	}
	def := &sigs[0]
	b := make([]byte, 0, 64+96*len(sigs))
	b = append(b, WireVersion)
	if def.AggregateID != (factum.AggregateID{}) {
		b = appendAggregateID(b, sigsAggregateID, def.AggregateID)
	}
	b = appendVarint(b, sigsStage, uint64(def.Stage))
	if !def.Function.IsZero() {
		b = appendFunction(b, sigsFunction, def.Function)
	}
	if def.Code != "" {
		b = appendString(b, sigsCode, string(def.Code))
	}
	for i := range sigs {
		var err error
		if b, err = appendSignal(b, &sigs[i], def); err != nil {
			return nil, fmt.Errorf("nats: signal %d (command %s): %w", i, sigs[i].CommandID, err)
		}
	}
	return b, nil
}

// appendSignal appends the field of s, a signal of the batch whose
// defaults are def's.
func appendSignal(b []byte, s, def *factum.Signal) ([]byte, error) {
	if !s.Stage.Valid() {
		return b, fmt.Errorf("invalid command stage %d", uint8(s.Stage))
	}
	b, start := openMessage(b, sigsSignal)
	if s.Stage != def.Stage {
		b = appendVarint(b, sigStage, uint64(s.Stage))
	}
	if s.CommandID != "" {
		b = appendString(b, sigCommandID, s.CommandID)
	}
	if s.RequestID != s.CommandID {
		b = appendString(b, sigRequestID, s.RequestID)
	}
	if s.AggregateID != def.AggregateID {
		b = appendAggregateID(b, sigAggregateID, s.AggregateID)
	}
	if s.AggregateVersion != 0 {
		b = appendInt(b, sigAggregateVersion, s.AggregateVersion)
	}
	if s.Function != def.Function {
		b = appendFunction(b, sigFunction, s.Function)
	}
	if len(s.EventNames) > 0 {
		b = appendStrings(b, sigEventNames, s.EventNames)
	}
	if s.Code != def.Code {
		b = appendString(b, sigCode, string(s.Code))
	}
	if s.Message != "" {
		b = appendString(b, sigMessage, s.Message)
	}
	if len(s.Bindings) > 0 {
		var bs int
		b, bs = openMessage(b, sigBindings)
		for _, e := range s.Bindings {
			var es int
			b, es = openMessage(b, 1)
			if e.Field != "" {
				b = appendString(b, bindField, e.Field)
			}
			if e.Message != "" {
				b = appendString(b, bindMessage, e.Message)
			}
			b = closeMessage(b, es)
		}
		b = closeMessage(b, bs)
	}
	if len(s.Results) > 0 {
		r, err := json.Marshal(s.Results)
		if err != nil {
			return b, fmt.Errorf("results: %w", err)
		}
		b = appendBytes(b, sigResults, r)
	}
	if s.Duplicate {
		b = appendVarint(b, sigDuplicate, 1)
	}
	if s.Note != "" {
		b = appendString(b, sigNote, s.Note)
	}
	b = appendTime(b, sigSignalTime, s.SignalTime)
	return closeMessage(b, start), nil
}

// stage returns the command stage f holds, which must be valid.
func (f wireField) stage() (factum.CommandStage, error) {
	u, err := f.varint()
	if err != nil {
		return 0, err
	}
	if st := factum.CommandStage(u); u <= 0xff && st.Valid() {
		return st, nil
	}
	return 0, &wireError{off: f.off, reason: fmt.Sprintf("invalid command stage %d", u)}
}

func appendFunction(b []byte, num protowire.Number, f factum.Function) []byte {
	b, start := openMessage(b, num)
	if f.Context != "" {
		b = appendString(b, fnContext, f.Context)
	}
	if f.Processor != "" {
		b = appendString(b, fnProcessor, f.Processor)
	}
	if f.Name != "" {
		b = appendString(b, fnName, f.Name)
	}
	return closeMessage(b, start)
}

func consumeFunction(f wireField, like factum.Function) (factum.Function, error) {
	var fn factum.Function
	err := consumeFields(f, func(g wireField) (err error) {
		switch g.num {
		case fnContext:
			fn.Context, err = g.str(like.Context)
		case fnProcessor:
			fn.Processor, err = g.str(like.Processor)
		case fnName:
			fn.Name, err = g.str(like.Name)
		default:
			err = g.unknown("a function")
		}
		return err
	})
	return fn, err
}

// decodeSignals decodes a body encodeSignals made, expecting about n
// signals (a hint: the header's count, which makes room for no more than
// maxHint). The signals are what JSON decoding gives of their JSON:
// lists and maps that were empty are nil, strings as jsonString makes
// them, Results' numbers float64, SignalTime located as consumeTime
// says. Any other body is an error, never a panic.
func decodeSignals(body []byte, n int) ([]factum.Signal, error) {
	rest, err := checkVersion(body)
	if err != nil {
		return nil, err
	}
	sigs := make([]factum.Signal, 0, max(0, min(n, len(rest)/2, maxHint)))
	var def factum.Signal
	names := arena[string]{size: 64}
	r := &wireReader{b: rest, base: 1}
	for !r.done() {
		f, err := r.next()
		if err != nil {
			return nil, err
		}
		if f.num != sigsSignal && len(sigs) > 0 {
			return nil, &wireError{off: f.off, reason: fmt.Sprintf("batch field %d after a signal", f.num)}
		}
		switch f.num {
		case sigsAggregateID:
			def.AggregateID, err = consumeAggregateID(f, factum.AggregateID{})
		case sigsStage:
			def.Stage, err = f.stage()
		case sigsFunction:
			def.Function, err = consumeFunction(f, factum.Function{})
		case sigsCode:
			var c string
			c, err = f.str("")
			def.Code = factum.Code(c)
		case sigsSignal:
			sigs = append(sigs, def)
			var like *factum.Signal
			if k := len(sigs); k > 1 {
				like = &sigs[k-2]
			}
			err = consumeSignal(f, &sigs[len(sigs)-1], like, &names)
		default:
			err = f.unknown("a signal batch")
		}
		if err != nil {
			return nil, err
		}
	}
	return sigs, nil
}

// consumeSignal decodes the signal f holds into s, which holds the
// batch's defaults, its event names into names; like is the signal
// before it, nil for the first, whose event names' strings it shares.
func consumeSignal(f wireField, s *factum.Signal, like *factum.Signal, names *arena[string]) error {
	r, err := f.inner()
	if err != nil {
		return err
	}
	request := false
	for !r.done() {
		g, err := r.next()
		if err != nil {
			return err
		}
		switch g.num {
		case sigStage:
			s.Stage, err = g.stage()
		case sigCommandID:
			s.CommandID, err = g.str("")
		case sigRequestID:
			request = true
			s.RequestID, err = g.str(s.CommandID)
		case sigAggregateID:
			s.AggregateID, err = consumeAggregateID(g, s.AggregateID)
		case sigAggregateVersion:
			s.AggregateVersion, err = g.integer()
		case sigFunction:
			s.Function, err = consumeFunction(g, s.Function)
		case sigEventNames:
			var prev []string
			if like != nil {
				prev = like.EventNames
			}
			s.EventNames, err = consumeStrings(g, prev, names)
		case sigCode:
			var c string
			c, err = g.str(string(s.Code))
			s.Code = factum.Code(c)
		case sigMessage:
			s.Message, err = g.str("")
		case sigBindings:
			s.Bindings, err = consumeBindings(g)
		case sigResults:
			var raw []byte
			if raw, err = g.bytes(); err == nil {
				s.Results = nil
				if err = json.Unmarshal(raw, &s.Results); err != nil {
					err = &wireError{off: g.off, reason: fmt.Sprintf("results: %v", err)}
				}
			}
		case sigDuplicate:
			s.Duplicate, err = g.boolean()
		case sigNote:
			s.Note, err = g.str("")
		case sigSignalTime:
			s.SignalTime, err = consumeTime(g)
		default:
			err = g.unknown("a signal")
		}
		if err != nil {
			return err
		}
	}
	if !s.Stage.Valid() {
		return &wireError{off: f.off, reason: "a signal of no stage"}
	}
	if !request {
		s.RequestID = s.CommandID
	}
	return nil
}

func consumeBindings(f wireField) ([]factum.BindingError, error) {
	r, err := f.inner()
	if err != nil {
		return nil, err
	}
	var bs []factum.BindingError
	for !r.done() {
		g, err := r.next()
		if err != nil {
			return nil, err
		}
		if g.num != 1 {
			return nil, g.unknown("a list of binding errors")
		}
		var e factum.BindingError
		err = consumeFields(g, func(h wireField) (err error) {
			switch h.num {
			case bindField:
				e.Field, err = h.str("")
			case bindMessage:
				e.Message, err = h.str("")
			default:
				err = h.unknown("a binding error")
			}
			return err
		})
		if err != nil {
			return nil, err
		}
		bs = append(bs, e)
	}
	return bs, nil
}
