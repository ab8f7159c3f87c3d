package sqlstore

import (
	"fmt"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/event"
)

// CheckFenced refuses a fenced save of pos under l whose group or
// position is invalid.
func CheckFenced(l event.Lease, pos factum.Position) error {
	if err := event.ValidateGroup(l.Group); err != nil {
		return err
	}
	return event.ValidatePosition(pos)
}

// LeaseError wraps the error err of the lease operation op on group; nil
// for none.
func LeaseError(d *Dialect, op string, group factum.Function, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %s the lease of %s: %w", d.Name, op, group, err)
}
