package snapshot_test

import (
	"errors"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/snapshot"
)

func TestStrategies(t *testing.T) {
	cases := []struct {
		s              snapshot.Strategy
		saved, current int
		want           bool
	}{
		{snapshot.All(), 0, 1, true},
		{snapshot.All(), 7, 8, true},
		{snapshot.All(), 8, 8, true}, // the store decides: an equal version repairs
		{snapshot.VersionOffset(0), 0, 4, false},
		{snapshot.VersionOffset(0), 0, 5, true},
		{snapshot.VersionOffset(-3), 5, 10, true},
		{snapshot.VersionOffset(5), 5, 9, false},
		{snapshot.VersionOffset(5), 5, 11, true},
		{snapshot.VersionOffset(1), 5, 6, true},
		{snapshot.VersionOffset(1), 6, 6, false},
		{snapshot.VersionOffset(3), 9, 4, false},
	}
	for _, c := range cases {
		if got := c.s.ShouldSave(c.saved, c.current); got != c.want {
			t.Errorf("%s.ShouldSave(%d, %d) = %v, want %v", c.s, c.saved, c.current, got, c.want)
		}
	}
}

func TestParseStrategy(t *testing.T) {
	for in, want := range map[string]string{
		"":                 "all",
		"all":              "all",
		" ALL ":            "all",
		"version_offset":   "version_offset:5",
		"Version_Offset:3": "version_offset:3",
	} {
		s, err := snapshot.ParseStrategy(in)
		if err != nil {
			t.Errorf("ParseStrategy(%q): %v", in, err)
			continue
		}
		if s.String() != want {
			t.Errorf("ParseStrategy(%q) = %s, want %s", in, s, want)
		}
		back, err := snapshot.ParseStrategy(s.String())
		if err != nil || back.String() != s.String() {
			t.Errorf("ParseStrategy(%q) does not read its own String: %v, %v", s.String(), back, err)
		}
	}
	for _, bad := range []string{"sometimes", "version_offset:0", "version_offset:-2", "version_offset:x", "all:3", "version_offset:"} {
		if _, err := snapshot.ParseStrategy(bad); !errors.Is(err, factum.ErrIllegalArgument) {
			t.Errorf("ParseStrategy(%q) = %v, want IllegalArgument", bad, err)
		}
	}
}
