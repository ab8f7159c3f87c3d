package factum

import (
	"encoding/json"
	"testing"
)

func TestStages(t *testing.T) {
	for _, s := range Stages {
		got, err := ParseCommandStage(s.String())
		if err != nil || got != s {
			t.Fatalf("ParseCommandStage(%s) = %v, %v", s, got, err)
		}
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		var back CommandStage
		if err := json.Unmarshal(b, &back); err != nil || back != s {
			t.Fatalf("JSON %s -> %v, %v", b, back, err)
		}
	}
	if _, err := ParseCommandStage("DONE"); err == nil {
		t.Fatal("unknown stage parsed")
	}
	if _, err := json.Marshal(CommandStage(0)); err == nil {
		t.Fatal("invalid stage marshalled")
	}
	previous := []struct {
		s, t CommandStage
		want bool
	}{
		{StageSent, StageProcessed, true},
		{StageSent, StageSagaHandled, true},
		{StageProcessed, StageSnapshot, true},
		{StageProcessed, StageProcessed, false},
		{StageProcessed, StageSent, false},
		{StageSnapshot, StageProjected, false},
		{StageProjected, StageSnapshot, false},
		{CommandStage(0), StageSent, false},
	}
	for _, p := range previous {
		if got := p.s.IsPreviousOf(p.t); got != p.want {
			t.Errorf("%v.IsPreviousOf(%v) = %v, want %v", p.s, p.t, got, p.want)
		}
	}
}

func TestPosition(t *testing.T) {
	ps := []Position{{}, {Seq: 1}, {Seq: 2}, {Tx: 1, Seq: 0}, {Tx: 1, Seq: 5}, {Tx: 2, Seq: 1}}
	for i := range ps {
		for j := range ps {
			if got := ps[i].Less(ps[j]); got != (i < j) {
				t.Errorf("%v.Less(%v) = %v", ps[i], ps[j], got)
			}
		}
		back, err := ParsePosition(ps[i].String())
		if err != nil || back != ps[i] {
			t.Errorf("ParsePosition(%s) = %v, %v", ps[i], back, err)
		}
	}
	for _, bad := range []string{"", "1", "a:b", "1:2:3", "-1:2"} {
		if _, err := ParsePosition(bad); err == nil {
			t.Errorf("ParsePosition(%q) succeeded", bad)
		}
	}
}

func TestFunctionMatches(t *testing.T) {
	f := Function{Context: "shop", Processor: "summary", Name: "on_added"}
	tests := []struct {
		target Function
		want   bool
	}{
		{Function{}, true},
		{Function{Context: "shop"}, true},
		{Function{Processor: "summary", Name: "on_added"}, true},
		{f, true},
		{Function{Context: "other"}, false},
		{Function{Name: "on_removed"}, false},
	}
	for _, tt := range tests {
		if got := f.Matches(tt.target); got != tt.want {
			t.Errorf("Matches(%v) = %v, want %v", tt.target, got, tt.want)
		}
	}
	if err := (Function{Context: "shop", Processor: "p"}).Validate(); err == nil {
		t.Error("function without a name validated")
	}
}
