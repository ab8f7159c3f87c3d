package query

import (
	"fmt"
	"time"
)

// maxDays bounds RECENT_DAYS and EARLIER_DAYS (about 100 years), so the
// bounds stay far from any overflow.
const maxDays = 36_600

// dateRange returns the half-open range [lo, hi) of an operator relative
// to now, in now's location. A zero lo means unbounded below.
func dateRange(op Operator, days int, now time.Time) (lo, hi time.Time) {
	y, m, d := now.Date()
	loc := now.Location()
	day := func(n int) time.Time { return time.Date(y, m, d+n, 0, 0, 0, 0, loc) }
	// ISO weeks start on Monday; Go's Sunday is 0.
	monday := -((int(now.Weekday()) + 6) % 7)
	month := func(n int) time.Time { return time.Date(y, m+time.Month(n), 1, 0, 0, 0, 0, loc) }
	switch op {
	case OpToday:
		return day(0), day(1)
	case OpYesterday:
		return day(-1), day(0)
	case OpTomorrow:
		return day(1), day(2)
	case OpBeforeToday:
		return time.Time{}, day(0)
	case OpThisWeek:
		return day(monday), day(monday + 7)
	case OpNextWeek:
		return day(monday + 7), day(monday + 14)
	case OpLastWeek:
		return day(monday - 7), day(monday)
	case OpThisMonth:
		return month(0), month(1)
	case OpLastMonth:
		return month(-1), month(0)
	case OpRecentDays:
		return day(1 - days), day(1)
	case OpEarlierDays:
		return time.Time{}, day(1 - days)
	}
	panic(fmt.Sprintf("query: dateRange called with %s", op))
}

// lowerDate turns a date-relative condition into numeric comparisons on
// epoch milliseconds.
func lowerDate(c Condition, days int, now time.Time) Condition {
	lo, hi := dateRange(c.Operator, days, now)
	upper := Condition{Field: c.Field, Operator: OpLt, Value: float64(hi.UnixMilli())}
	if lo.IsZero() {
		return upper
	}
	return And(Condition{Field: c.Field, Operator: OpGte, Value: float64(lo.UnixMilli())}, upper)
}
