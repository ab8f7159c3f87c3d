package event

import (
	"time"

	"github.com/factum-go/factum"
)

// checkpointBatch decides when a consumer saves its checkpoint (see
// Config.CheckpointStreams): it counts the streams handled past the saved
// position and remembers when the first of them was handled. It measures
// time by the monotonic clock, not Config.Now, which dates signals.
type checkpointBatch struct {
	saved    factum.Position // the position last saved (or read at start)
	streams  int             // save once this many are unsaved
	interval time.Duration   // save once the first unsaved is this old; < 0: at once
	unsaved  int             // streams handled past saved
	since    time.Time       // when the first of them was handled
}

// handled records n more streams handled.
func (b *checkpointBatch) handled(n int, now time.Time) {
	if b.unsaved == 0 {
		b.since = now
	}
	b.unsaved += n
}

// due reports whether the checkpoint should be saved at pos now.
func (b *checkpointBatch) due(pos factum.Position, now time.Time) bool {
	if pos == b.saved {
		return false
	}
	return b.interval < 0 || b.unsaved >= b.streams || now.Sub(b.since) >= b.interval
}

// left returns how long until the unsaved streams at pos are due by time,
// and whether there are any.
func (b *checkpointBatch) left(pos factum.Position, now time.Time) (time.Duration, bool) {
	if pos == b.saved {
		return 0, false
	}
	return max(b.interval-now.Sub(b.since), 0), true
}

// savedAt records a successful save at pos.
func (b *checkpointBatch) savedAt(pos factum.Position) {
	b.saved, b.unsaved = pos, 0
}
