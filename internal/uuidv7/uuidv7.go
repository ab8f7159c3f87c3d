package uuidv7

import (
	"crypto/rand"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"
)

// Generator makes UUIDv7 IDs for a component that makes many of them,
// such as a command processor (a stream ID and one ID per event
// for every command). It is safe for concurrent use, its zero value is ready
// to use, and it holds no state shared with other generators: give each
// runtime or processor its own.
//
// Every ID it returns is distinct from every other ID it returned, and IDs
// are strictly increasing in the order the generator hands them out
// (concurrent callers are ordered by the generator, not by their calls):
// the 48-bit millisecond timestamp is followed by a 12-bit counter (RFC
// 9562, section 6.2, method 1), and when more than 4,096 IDs are made in one
// millisecond, or the clock steps back, the counter carries into the
// timestamp, which then runs ahead of the clock until the clock catches up.
// The remaining 62 bits are random, read from crypto/rand in 4 KiB batches,
// so IDs from different generators and processes stay unique with the
// same odds as any UUIDv7's.
type Generator struct {
	// last is the timestamp and counter of the last ID handed out,
	// (unix ms << 12) | counter: reserving IDs is one compare-and-swap.
	last atomic.Uint64
	// random holds *randomBatch values: each caller takes one for itself,
	// so batches need no lock, and sync.Pool keeps one close to each P.
	random sync.Pool
	// clock returns unix milliseconds; nil means the system clock. Tests
	// set it.
	clock func() int64
}

// NewGenerator returns a generator. It is the same as new(Generator).
func NewGenerator() *Generator { return new(Generator) }

// idLen is the length of a formatted UUID.
const idLen = 36

// randomBatch is a batch of bytes read from crypto/rand, handed out 8 at a
// time. A batch is used by one goroutine at a time, so no byte is ever
// handed out twice.
type randomBatch struct {
	buf [4096]byte
	off int
}

func (b *randomBatch) next8() []byte {
	if b.off+8 > len(b.buf) {
		// crypto/rand.Read never fails: the runtime crashes if the
		// system's random source does.
		_, _ = rand.Read(b.buf[:])
		b.off = 0
	}
	r := b.buf[b.off : b.off+8]
	b.off += 8
	return r
}

// New returns a new UUIDv7 string.
func (g *Generator) New() string {
	var id [1]string
	g.fill(id[:], g.millis())
	return id[0]
}

// Fill sets every element of ids to a new UUIDv7 string, in increasing
// order. The strings share one allocation, so filling a stream's ID and
// its events' IDs costs one allocation instead of one per ID.
func (g *Generator) Fill(ids []string) {
	g.fill(ids, g.millis())
}

// FillAt is Fill with the caller's clock reading: the IDs carry now's
// millisecond, or a later one if the generator already handed out IDs past
// it. It saves a clock read where the caller needs the time anyway, such
// as a stream's create time.
func (g *Generator) FillAt(ids []string, now time.Time) {
	ms := now.UnixMilli()
	// A time outside the 48-bit field cannot be carried; such IDs take
	// the nearest value, and the counter keeps them increasing.
	ms = min(max(ms, 0), maxMillis)
	g.fill(ids, uint64(ms))
}

// maxMillis is the largest timestamp a UUIDv7 holds (48 bits).
const maxMillis = 1<<48 - 1

func (g *Generator) fill(ids []string, ms uint64) {
	n := len(ids)
	if n == 0 {
		return
	}
	first := g.reserve(ms, uint64(n))
	rb, _ := g.random.Get().(*randomBatch)
	if rb == nil {
		rb = &randomBatch{off: len(randomBatch{}.buf)}
	}
	// All n IDs are formatted straight into one buffer that becomes one
	// string: one allocation, no intermediate copies.
	buf := make([]byte, idLen*n)
	var raw [16]byte
	for i := range n {
		tc := first + uint64(i)
		ms, ctr := tc>>12, tc&0xfff
		raw[0] = byte(ms >> 40)
		raw[1] = byte(ms >> 32)
		raw[2] = byte(ms >> 24)
		raw[3] = byte(ms >> 16)
		raw[4] = byte(ms >> 8)
		raw[5] = byte(ms)
		raw[6] = 0x70 | byte(ctr>>8) // version 7, counter's high nibble
		raw[7] = byte(ctr)
		copy(raw[8:], rb.next8())
		raw[8] = 0x80 | raw[8]&0x3f // variant 10
		formatUUID((*[idLen]byte)(buf[i*idLen:]), &raw)
	}
	g.random.Put(rb)
	// buf is never written again, so the string may share its memory.
	s := unsafe.String(&buf[0], len(buf))
	for i := range ids {
		ids[i] = s[i*idLen : (i+1)*idLen]
	}
}

// reserve hands out n consecutive timestamp-counter values and returns the
// first. They start at the current millisecond with counter 0, or right
// after the last value handed out if that is later.
func (g *Generator) reserve(ms, n uint64) uint64 {
	now := ms << 12
	for {
		last := g.last.Load()
		first := max(now, last+1)
		if g.last.CompareAndSwap(last, first+n-1) {
			return first
		}
	}
}

func (g *Generator) millis() uint64 {
	if g.clock != nil {
		return uint64(g.clock())
	}
	return uint64(time.Now().UnixMilli())
}

const hexDigits = "0123456789abcdef"

// formatUUID writes raw as 8-4-4-4-12 lowercase hex.
func formatUUID(dst *[idLen]byte, raw *[16]byte) {
	j := 0
	for i, c := range raw {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			dst[j] = '-'
			j++
		}
		dst[j] = hexDigits[c>>4]
		dst[j+1] = hexDigits[c&0xf]
		j += 2
	}
}
