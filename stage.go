package factum

import (
	"fmt"
	"strings"
)

// CommandStage is a point in a command's processing a caller can wait for.
type CommandStage uint8

// The stages. SENT and PROCESSED are sequential; the branch stages follow
// PROCESSED independently of each other.
const (
	// StageSent: the command bus accepted the command.
	StageSent CommandStage = iota + 1
	// StageProcessed: the aggregate handled it (appended a stream or
	// rejected it).
	StageProcessed
	// StageSnapshot: the snapshotter handled the stream (saved or skipped).
	StageSnapshot
	// StageProjected: projections handled the stream.
	StageProjected
	// StageEventHandled: event handlers handled the stream.
	StageEventHandled
	// StageSagaHandled: sagas handled the stream and sent their commands.
	StageSagaHandled
)

// Stages lists every stage in order.
var Stages = []CommandStage{StageSent, StageProcessed, StageSnapshot, StageProjected, StageEventHandled, StageSagaHandled}

var stageNames = [...]string{"", "SENT", "PROCESSED", "SNAPSHOT", "PROJECTED", "EVENT_HANDLED", "SAGA_HANDLED"}

// String returns the stage's wire name, such as "PROCESSED".
func (s CommandStage) String() string {
	if s.Valid() {
		return stageNames[s]
	}
	return fmt.Sprintf("CommandStage(%d)", uint8(s))
}

// Valid reports whether s is a defined stage.
func (s CommandStage) Valid() bool { return s >= StageSent && s <= StageSagaHandled }

// IsBranch reports whether s is one of the stages after PROCESSED.
func (s CommandStage) IsBranch() bool { return s > StageProcessed && s.Valid() }

// IsPreviousOf reports whether s must be reached before t: SENT precedes
// every other stage, PROCESSED precedes every branch stage, and branch
// stages do not precede each other.
func (s CommandStage) IsPreviousOf(t CommandStage) bool {
	if !s.Valid() || !t.Valid() {
		return false
	}
	switch s {
	case StageSent:
		return t > StageSent
	case StageProcessed:
		return t.IsBranch()
	}
	return false
}

// ParseCommandStage parses a stage name, ignoring case ("processed" works).
func ParseCommandStage(name string) (CommandStage, error) {
	for i := 1; i < len(stageNames); i++ {
		if strings.EqualFold(stageNames[i], name) {
			return CommandStage(i), nil
		}
	}
	return 0, IllegalArgument(fmt.Sprintf("unknown command stage %q (want one of SENT, PROCESSED, SNAPSHOT, PROJECTED, EVENT_HANDLED, SAGA_HANDLED)", name))
}

// MarshalText implements encoding.TextMarshaler with the wire name.
func (s CommandStage) MarshalText() ([]byte, error) {
	if !s.Valid() {
		return nil, IllegalArgument(fmt.Sprintf("invalid command stage %d", uint8(s)))
	}
	return []byte(s.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (s *CommandStage) UnmarshalText(b []byte) error {
	v, err := ParseCommandStage(string(b))
	if err != nil {
		return err
	}
	*s = v
	return nil
}
