package event

import (
	"context"
	"fmt"
	"math"
	"sync"

	"github.com/factum-go/factum"
)

// ValidateGroup checks a consumer group's identity, as every
// CheckpointStore does: the Function of an event function or, with an
// empty name, of a processor (a Consumer's group). It returns an
// IllegalArgument error.
func ValidateGroup(group factum.Function) error {
	if err := factum.ValidateName("group context", group.Context); err != nil {
		return err
	}
	if err := factum.ValidateName("group processor", group.Processor); err != nil {
		return err
	}
	if group.Name != "" {
		return factum.ValidateName("group function", group.Name)
	}
	return nil
}

// ValidatePosition refuses checkpoint positions beyond the 63-bit range
// that SQL stores' signed integers hold; no log hands them out.
func ValidatePosition(pos factum.Position) error {
	if pos.Tx > math.MaxInt64 || pos.Seq > math.MaxInt64 {
		return factum.IllegalArgument(fmt.Sprintf("checkpoint position %s is beyond the 63-bit range a log hands out", pos))
	}
	return nil
}

// CheckpointStore keeps each consumer group's position in the global log.
// Implementations are safe for concurrent use.
type CheckpointStore interface {
	// Checkpoint returns the group's saved position, or the zero Position
	// when none was saved.
	Checkpoint(ctx context.Context, group factum.Function) (factum.Position, error)
	// SaveCheckpoint records the group's position. A position before the
	// saved one is ignored, so a checkpoint never moves backwards.
	SaveCheckpoint(ctx context.Context, group factum.Function, pos factum.Position) error
}

// MemoryCheckpoints is an in-memory CheckpointStore, for tests and for the
// in-memory event store.
type MemoryCheckpoints struct {
	mu  sync.Mutex
	pos map[factum.Function]factum.Position
}

// NewMemoryCheckpoints returns an empty store.
func NewMemoryCheckpoints() *MemoryCheckpoints {
	return &MemoryCheckpoints{pos: make(map[factum.Function]factum.Position)}
}

// Checkpoint implements CheckpointStore.
func (m *MemoryCheckpoints) Checkpoint(ctx context.Context, group factum.Function) (factum.Position, error) {
	if err := ctx.Err(); err != nil {
		return factum.Position{}, err
	}
	if err := ValidateGroup(group); err != nil {
		return factum.Position{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.pos[group], nil
}

// SaveCheckpoint implements CheckpointStore.
func (m *MemoryCheckpoints) SaveCheckpoint(ctx context.Context, group factum.Function, pos factum.Position) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := ValidateGroup(group); err != nil {
		return err
	}
	if err := ValidatePosition(pos); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.pos[group].Less(pos) {
		m.pos[group] = pos
	}
	return nil
}
