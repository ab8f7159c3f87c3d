package aggregate_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/internal/built"
)

// groupFault is what groupStore does with one group instead of appending
// it plainly.
type groupFault int

const (
	groupAppends groupFault = iota
	// groupRefused: nothing is appended and a definite refusal returned.
	groupRefused
	// groupLost: nothing is appended and an unknown outcome returned.
	groupLost
	// groupCommittedUnknown: the group is appended, yet an unknown
	// outcome is returned (the commit's answer lost).
	groupCommittedUnknown
)

// groupStore is a memory event store that appends groups: one mutex
// around checking a whole group and appending it makes the group all or
// none, with the store's only writer behind the same mutex. It counts
// the groups and their sizes, fails the groups fault says, and waits
// delay in every append and group, as a commit would.
type groupStore struct {
	*eventstore.Memory
	delay time.Duration
	fault func(n int) groupFault // of the n-th group, 1-based; nil: none

	mu      sync.Mutex
	groups  []int // sizes of the groups appended or failed, in order
	appends int   // single appends
}

func newGroupStore() *groupStore { return &groupStore{Memory: eventstore.NewMemory()} }

var _ built.GroupAppender = (*groupStore)(nil)

// BuiltOwner declares the store's own AppendBuilt, as built.Of requires.
func (s *groupStore) BuiltOwner() built.Owner { return built.OwnedBy(s) }

// AppendsGroups implements built.GroupAppender.
func (s *groupStore) AppendsGroups() bool { return true }

func (s *groupStore) Append(ctx context.Context, st *factum.EventStream) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.appends++
	time.Sleep(s.delay)
	return s.Memory.Append(ctx, st)
}

func (s *groupStore) AppendBuilt(ctx context.Context, b built.Stream) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.appends++
	time.Sleep(s.delay)
	return s.Memory.AppendBuilt(ctx, b)
}

var (
	errInjectedRefusal = factum.NewError(factum.CodeEventVersionConflict, "injected refusal of a group")
	errInjectedUnknown = errors.New("injected: the group's outcome is unknown")
)

// AppendBuiltGroup checks every stream after the first (the first one's
// append checks itself), then appends them all.
func (s *groupStore) AppendBuiltGroup(ctx context.Context, ss []built.Stream) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.groups = append(s.groups, len(ss))
	time.Sleep(s.delay)
	fault := groupAppends
	if s.fault != nil {
		fault = s.fault(len(s.groups))
	}
	switch fault {
	case groupRefused:
		return errInjectedRefusal
	case groupLost:
		return errInjectedUnknown
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if len(ss) == 0 {
		return factum.IllegalArgument("empty group")
	}
	first := ss[0].Stream()
	seen := map[string]bool{}
	for i, b := range ss {
		st := b.Stream()
		if err := b.Validate(); err != nil {
			return err
		}
		if st.AggregateID != first.AggregateID || st.Version != first.Version+i {
			return factum.IllegalArgument(fmt.Sprintf("group stream %d: not the next stream of %s", i, first.AggregateID))
		}
		if seen[st.RequestID] {
			return factum.IllegalArgument("group: a request twice")
		}
		seen[st.RequestID] = true
		if i == 0 {
			continue
		}
		ok, err := s.Memory.RequestExists(ctx, st.AggregateID, st.RequestID)
		if err != nil {
			return err
		}
		if ok {
			return fmt.Errorf("group stream %d: %w", i, factum.ErrDuplicateRequestID)
		}
	}
	if err := s.Memory.AppendBuilt(ctx, ss[0]); err != nil {
		return err
	}
	for i, b := range ss[1:] {
		if err := s.Memory.AppendBuilt(ctx, b); err != nil {
			panic(fmt.Sprintf("groupStore: stream %d of a checked group refused: %v", i+1, err))
		}
	}
	if fault == groupCommittedUnknown {
		return errInjectedUnknown
	}
	return nil
}

// counts returns the sizes of the groups so far and the single appends.
func (s *groupStore) counts() (groups []int, appends int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]int(nil), s.groups...), s.appends
}
