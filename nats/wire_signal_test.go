package nats

import (
	"encoding/json"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"pgregory.net/rapid"
)

// genString draws a string: mostly from a few, so that the batch's
// defaults and shared strings come into play, else any string, valid
// UTF-8 or not (JSON replaces the bytes that are not).
func genString(t *rapid.T, label string, few ...string) string {
	if len(few) > 0 && rapid.Bool().Draw(t, label+"-few") {
		return rapid.SampledFrom(few).Draw(t, label)
	}
	return anyString.Draw(t, label)
}

// anyString draws a string: mostly valid UTF-8, else a few bytes of any
// value.
var anyString = rapid.OneOf(rapid.String(), rapid.String(), rapid.String(),
	rapid.Map(rapid.SliceOfN(rapid.Byte(), 0, 4), func(b []byte) string { return string(b) }))

// genTime draws a time JSON can carry: a year from 0 to 9999, any
// nanosecond, in UTC, time.Local or a zone of a whole-minute offset.
func genTime(t *rapid.T, label string) time.Time {
	if rapid.IntRange(0, 5).Draw(t, label+"-zero") == 0 {
		return time.Time{}
	}
	sec := rapid.Int64Range(-62167219200+2*86400, 253402300799-2*86400).Draw(t, label+"-sec")
	tm := time.Unix(sec, int64(rapid.IntRange(0, 999999999).Draw(t, label+"-nsec")))
	switch rapid.IntRange(0, 2).Draw(t, label+"-loc") {
	case 0:
		return tm.UTC()
	case 1:
		return tm
	}
	off := rapid.IntRange(-(23*60+59), 23*60+59).Draw(t, label+"-off") * 60
	return tm.In(time.FixedZone(genString(t, label+"-zone", "", "CET"), off))
}

// genResults draws Results: values of the kinds functions return, nested.
func genResults(t *rapid.T) map[string]any {
	if rapid.IntRange(0, 3).Draw(t, "results-none") > 0 {
		return nil
	}
	var value func(depth int) any
	value = func(depth int) any {
		switch k := rapid.IntRange(0, 6).Draw(t, "kind"); {
		case k == 0:
			return rapid.Float64().Filter(func(f float64) bool { return !math.IsInf(f, 0) && !math.IsNaN(f) }).Draw(t, "float")
		case k == 1:
			return rapid.Int().Draw(t, "int")
		case k == 2:
			return rapid.String().Draw(t, "string")
		case k == 3:
			return rapid.Bool().Draw(t, "bool")
		case k == 4 || depth > 1:
			return nil
		case k == 5:
			return []any{value(depth + 1), value(depth + 1)}
		}
		return map[string]any{rapid.String().Draw(t, "key"): value(depth + 1)}
	}
	m := map[string]any{}
	for range rapid.IntRange(0, 3).Draw(t, "results") {
		m[rapid.String().Draw(t, "key")] = value(0)
	}
	return m
}

// genSignals draws a batch of signals, mostly alike, as a run's are.
func genSignals(t *rapid.T) []factum.Signal {
	n := rapid.IntRange(1, 8).Draw(t, "signals")
	sigs := make([]factum.Signal, n)
	for i := range sigs {
		s := &sigs[i]
		s.Stage = rapid.SampledFrom(factum.Stages).Draw(t, "stage")
		s.CommandID = genString(t, "command", "c1", "")
		s.RequestID = genString(t, "request", s.CommandID, "", "r1")
		s.AggregateID = factum.AggregateID{
			NamedAggregate: factum.NamedAggregate{Context: genString(t, "context", "shop"), Aggregate: genString(t, "aggregate", "cart")},
			ID:             genString(t, "id", "x", ""),
			Tenant:         genString(t, "tenant", "", factum.DefaultTenant),
		}
		s.AggregateVersion = rapid.IntRange(-2, math.MaxInt).Draw(t, "version")
		s.Function = factum.Function{Context: genString(t, "fn-context", "", "shop"), Processor: genString(t, "fn-processor", "", "carts"), Name: genString(t, "fn-name", "")}
		if rapid.Bool().Draw(t, "names") {
			s.EventNames = rapid.SliceOfN(rapid.SampledFrom([]string{"added", "removed", ""}), 0, 3).Draw(t, "event-names")
		}
		s.Code = factum.Code(genString(t, "code", string(factum.CodeOk), "", string(factum.CodeCommandValidation)))
		s.Message = genString(t, "message", "")
		if rapid.IntRange(0, 3).Draw(t, "bindings") == 0 {
			for range rapid.IntRange(0, 2).Draw(t, "bindings-n") {
				s.Bindings = append(s.Bindings, factum.BindingError{Field: genString(t, "field", ""), Message: genString(t, "bmsg", "")})
			}
		}
		s.Results = genResults(t)
		s.Duplicate = rapid.Bool().Draw(t, "duplicate")
		s.Note = genString(t, "note", "")
		s.SignalTime = genTime(t, "time")
	}
	return sigs
}

// jsonSignal is what a signal becomes through its JSON, the oracle of
// the binary encoding.
func jsonSignal(t testing.TB, s factum.Signal) factum.Signal {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatalf("signal %+v: %v", s, err)
	}
	var got factum.Signal
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	return got
}

// sameTime reports whether a and b are the same instant at the same
// offset, and in the same location when either is in UTC or time.Local.
func sameTime(a, b time.Time) bool {
	_, ao := a.Zone()
	_, bo := b.Zone()
	if !a.Equal(b) || ao != bo || a.IsZero() != b.IsZero() {
		return false
	}
	for _, l := range []*time.Location{time.UTC, time.Local} {
		if (a.Location() == l) != (b.Location() == l) {
			return false
		}
	}
	return true
}

// The signals of a batch decode as their JSON does today: every field,
// Results' numbers float64, lists and maps empty or nil alike nil, the
// time the same instant, at the same offset, in the same location.
func TestWireSignalsDecodeAsJSON(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		sigs := genSignals(rt)
		b, err := encodeSignals(sigs)
		if err != nil {
			rt.Fatal(err)
		}
		got, err := decodeSignals(b, len(sigs))
		if err != nil {
			rt.Fatalf("%v\n% x", err, b)
		}
		if len(got) != len(sigs) {
			rt.Fatalf("%d signals decoded, want %d", len(got), len(sigs))
		}
		for i := range sigs {
			want := jsonSignal(t, sigs[i])
			if !sameTime(got[i].SignalTime, want.SignalTime) {
				rt.Fatalf("signal %d: time %v (%v), want %v (%v)", i, got[i].SignalTime, got[i].SignalTime.Location(), want.SignalTime, want.SignalTime.Location())
			}
			g := got[i]
			g.SignalTime, want.SignalTime = time.Time{}, time.Time{}
			if !reflect.DeepEqual(g, want) {
				rt.Fatalf("signal %d:\n got %#v\nwant %#v", i, g, want)
			}
		}
	})
}

// Strings that are not valid UTF-8 decode as JSON decodes them, each bad
// byte U+FFFD, and times of any offset under a day travel to the second.
func TestWireSignalsStringsAndTimes(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		bad := string(append([]byte{0xff, 0xfe}, rapid.SliceOf(rapid.Byte()).Draw(rt, "raw")...))
		at := time.Unix(rapid.Int64().Draw(rt, "sec")/4, 0).In(time.FixedZone("", rapid.IntRange(-86399, 86399).Draw(rt, "off")))
		sigs := []factum.Signal{
			{Stage: factum.StageProcessed, CommandID: bad, RequestID: bad, Message: bad, EventNames: []string{bad}, SignalTime: at},
			{Stage: factum.StageProcessed, CommandID: "c", Code: factum.Code(bad)},
		}
		b, err := encodeSignals(sigs)
		if err != nil {
			rt.Fatal(err)
		}
		got, err := decodeSignals(b, 2)
		if err != nil {
			rt.Fatal(err)
		}
		want := jsonSignal(t, factum.Signal{Stage: factum.StageSent, CommandID: bad}).CommandID
		if got[0].CommandID != want || got[0].RequestID != want || got[0].Message != want || got[0].EventNames[0] != want || got[1].Code != factum.Code(want) {
			rt.Fatalf("strings %+v, want each %q", got, want)
		}
		if _, off := at.Zone(); !got[0].SignalTime.Equal(at) || func() int { _, o := got[0].SignalTime.Zone(); return o }() != off {
			rt.Fatalf("time %v, want %v", got[0].SignalTime, at)
		}
	})
}

// A decoded time is in UTC at offset 0, in time.Local when Local's
// offset at that instant is the time's, else in a fixed zone.
func TestWireTimeLocation(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Skip(err)
	}
	winter := time.Date(2026, 1, 5, 10, 0, 0, 123456789, berlin)
	summer := time.Date(2026, 7, 5, 10, 0, 0, 1, berlin)
	for _, tc := range []struct {
		name string
		in   time.Time
		want *time.Location // nil: a fixed zone
	}{
		{"utc", winter.UTC(), time.UTC},
		{"offset zero, named", winter.In(time.FixedZone("GMT", 0)), time.UTC},
		{"local winter", winter, berlin},
		{"local summer", summer, berlin},
		{"another offset", winter.In(time.FixedZone("X", 5*3600+1800)), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := appendTime(nil, 1, tc.in)
			r := &wireReader{b: b}
			f, err := r.next()
			if err != nil {
				t.Fatal(err)
			}
			sec, nsec, off := timeParts(t, f)
			got := located(sec, nsec, off, berlin)
			_, wo := tc.in.Zone()
			if _, o := got.Zone(); !got.Equal(tc.in) || o != wo {
				t.Errorf("%v, want %v", got, tc.in)
			}
			if tc.want != nil && got.Location() != tc.want {
				t.Errorf("in %v, want %v", got.Location(), tc.want)
			}
			if tc.want == nil && (got.Location() == berlin || got.Location() == time.UTC) {
				t.Errorf("in %v, want a fixed zone", got.Location())
			}
		})
	}
}

// timeParts decodes the parts of the time f holds.
func timeParts(t *testing.T, f wireField) (sec, nsec int64, off int) {
	t.Helper()
	tm, err := consumeTime(f)
	if err != nil {
		t.Fatal(err)
	}
	_, o := tm.Zone()
	return tm.Unix(), int64(tm.Nanosecond()), o
}

// A batch of signals writes what they share once: the encoding of 64
// signals of one command run is a fraction of their JSON.
func TestWireSignalsShareDefaults(t *testing.T) {
	sigs := benchSignals(64)
	b, err := encodeSignals(sigs)
	if err != nil {
		t.Fatal(err)
	}
	j, _ := json.Marshal(sigs)
	if 3*len(b) > len(j) {
		t.Errorf("%d bytes, %d in JSON: want under a third", len(b), len(j))
	}
}

// A signal JSON cannot carry does not encode either: the batch goes one
// signal at a time.
func TestWireSignalsRefuse(t *testing.T) {
	for name, s := range map[string]factum.Signal{
		"no stage":      {CommandID: "c"},
		"invalid stage": {Stage: 99, CommandID: "c"},
		"results":       {Stage: factum.StageSent, Results: map[string]any{"x": math.NaN()}},
	} {
		if _, err := encodeSignals([]factum.Signal{{Stage: factum.StageSent}, s}); err == nil {
			t.Errorf("%s: encoded", name)
		}
	}
}

// A body that is not the binary encoding's is refused, saying what it
// is.
func TestWireRefusesOtherBodies(t *testing.T) {
	checkRefused(t, decodeSignals, []refusal{
		{"empty", "", "empty"},
		{"json", `[{"commandId":"c"}]`, "JSON"},
		{"json with space", " [", "JSON"},
		{"other version", "\xf2\x2a\x00", "version"},
		{"truncated", "\xf1\x2a\x05\x10", "field 5"},
		{"unknown field", "\xf1\x48\x01", "no field 9"},
		{"wrong type", "\xf1\x08\x01", "wire type"},
		{"stage zero", "\xf1\x10\x00", "stage"},
		{"default after a signal", "\xf1\x10\x02\x2a\x00\x10\x02", "after a signal"},
		{"fixed64", "\xf1\x11\x00\x00\x00\x00\x00\x00\x00\x00", "wire type"},
	})
}

// Decoding any body returns signals or an error, never panics; what
// decodes encodes again to the same signals.
func FuzzDecodeSignals(f *testing.F) {
	for _, sigs := range [][]factum.Signal{benchSignals(3), fuzzSignals()} {
		b, err := encodeSignals(sigs)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`[{"commandId":"c"}]`))
	f.Fuzz(func(t *testing.T, body []byte) {
		sigs, err := decodeSignals(body, 64)
		if err != nil {
			return
		}
		again, err := encodeSignals(sigs)
		if err != nil {
			return // results that decode but do not encode, such as a huge number
		}
		back, err := decodeSignals(again, len(sigs))
		if err != nil {
			t.Fatalf("re-encoded signals do not decode: %v", err)
		}
		if len(back) != len(sigs) {
			t.Fatalf("%d signals, then %d", len(sigs), len(back))
		}
		for i := range sigs {
			if !back[i].SignalTime.Equal(sigs[i].SignalTime) {
				t.Fatalf("signal %d: time %v, then %v", i, sigs[i].SignalTime, back[i].SignalTime)
			}
			back[i].SignalTime, sigs[i].SignalTime = time.Time{}, time.Time{}
		}
		if !reflect.DeepEqual(normalResults(back), normalResults(sigs)) {
			t.Fatalf("signals\n%#v\nthen\n%#v", sigs, back)
		}
	})
}

// normalResults returns sigs with empty Results nil (a body may carry
// an empty object, which encodes as none).
func normalResults(sigs []factum.Signal) []factum.Signal {
	for i := range sigs {
		if len(sigs[i].Results) == 0 {
			sigs[i].Results = nil
		}
	}
	return sigs
}

// fuzzSignals are signals with every field set, differing from the first.
func fuzzSignals() []factum.Signal {
	at := time.Date(2026, 12, 5, 10, 0, 0, 5, time.FixedZone("", 3600))
	return []factum.Signal{
		{Stage: factum.StageSent, CommandID: "c0", AggregateID: factum.NamedAggregate{Context: "shop", Aggregate: "cart"}.WithID("x"), SignalTime: at},
		{
			Stage: factum.StageProcessed, CommandID: "c1", RequestID: "r1",
			AggregateID: factum.AggregateID{NamedAggregate: factum.NamedAggregate{Context: "shop", Aggregate: "cart"}, ID: "y"}, AggregateVersion: 7,
			Function: factum.Function{Context: "shop", Processor: "p", Name: "n"}, EventNames: []string{"a", "b"}, Code: factum.CodeCommandValidation,
			Message: "m", Bindings: []factum.BindingError{{Field: "f", Message: "bad"}}, Results: map[string]any{"n": 1.5, "s": []any{"x"}},
			Duplicate: true, Note: "note", SignalTime: at.UTC(),
		},
	}
}

// benchSignals are the PROCESSED signals of a run of n commands of one
// aggregate, as an owner returns them to the instance that sent them.
func benchSignals(n int) []factum.Signal {
	at := time.Now()
	sigs := make([]factum.Signal, n)
	for i := range sigs {
		id := factum.NewID()
		sigs[i] = factum.Signal{
			Stage: factum.StageProcessed, CommandID: id, RequestID: id,
			AggregateID:      factum.NamedAggregate{Context: "shop", Aggregate: "tally"}.WithID("t-1"),
			AggregateVersion: 100 + i, Function: factum.Function{Processor: "tally"},
			EventNames: []string{"added"}, Code: factum.CodeOk, SignalTime: at.Add(time.Duration(i) * time.Microsecond),
		}
	}
	return sigs
}

// BenchmarkWireSignalBatch encodes and decodes the signals of a run of
// 64 commands, in JSON and in the binary encoding.
func BenchmarkWireSignalBatch(b *testing.B) {
	sigs := benchSignals(64)
	jb, _ := json.Marshal(sigs)
	wb, err := encodeSignals(sigs)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("encode/json", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(jb)))
		for b.Loop() {
			if _, err := json.Marshal(sigs); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encode/wire", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(wb)))
		for b.Loop() {
			if _, err := encodeSignals(sigs); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("decode/json", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(jb)))
		for b.Loop() {
			var got []factum.Signal
			if err := json.Unmarshal(jb, &got); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("decode/wire", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(wb)))
		for b.Loop() {
			if _, err := decodeSignals(wb, 64); err != nil {
				b.Fatal(err)
			}
		}
	})
}
