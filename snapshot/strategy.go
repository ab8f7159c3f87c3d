package snapshot

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/factum-go/factum"
)

// Strategy decides, after an aggregate reached a new version, whether to
// save its state as a snapshot. The decision is a pure function of the
// version last saved (0 when none) and the new version, so every instance
// decides alike. Whatever it decides, the snapshotter signals SNAPSHOT
// afterwards.
type Strategy interface {
	// ShouldSave reports whether the state at version current is saved,
	// given that the last snapshot saved is at version saved.
	ShouldSave(saved, current int) bool
	// String names the strategy, in the form ParseStrategy reads.
	String() string
}

// DefaultVersionOffset is the offset VersionOffset uses for n <= 0.
const DefaultVersionOffset = 5

// All returns the default strategy: save after every stream, so the
// snapshot store always holds every aggregate's current state and can
// serve read-after-write queries once SNAPSHOT is signalled. It always
// says save; the store's version guard refuses what is older than the
// snapshot it holds.
func All() Strategy { return all{} }

type all struct{}

func (all) ShouldSave(saved, current int) bool { return true }
func (all) String() string                     { return "all" }

// VersionOffset returns the strategy that saves when the new version is n
// or more ahead of the last one saved (n <= 0 means
// DefaultVersionOffset). Queries over such a store may lag the aggregate
// by up to n-1 versions; loading stays cheap.
func VersionOffset(n int) Strategy {
	if n <= 0 {
		n = DefaultVersionOffset
	}
	return versionOffset(n)
}

type versionOffset int

func (o versionOffset) ShouldSave(saved, current int) bool { return current-saved >= int(o) }
func (o versionOffset) String() string                     { return "version_offset:" + strconv.Itoa(int(o)) }

// ParseStrategy reads a strategy from configuration: "all" (also the
// empty string), "version_offset" (offset DefaultVersionOffset) or
// "version_offset:N". Case is ignored.
func ParseStrategy(s string) (Strategy, error) {
	name, arg, hasArg := strings.Cut(strings.ToLower(strings.TrimSpace(s)), ":")
	switch name {
	case "", "all":
		if !hasArg {
			return All(), nil
		}
	case "version_offset":
		if !hasArg {
			return VersionOffset(DefaultVersionOffset), nil
		}
		n, err := strconv.Atoi(arg)
		if err == nil && n > 0 {
			return VersionOffset(n), nil
		}
	}
	return nil, factum.IllegalArgument(fmt.Sprintf("snapshot strategy %q: want all, version_offset or version_offset:N with N >= 1", s))
}
