package querytest

import (
	"github.com/factum-go/factum/query"
)

// The kit's clock is Wednesday 2026-03-11 15:30 UTC+8. The week runs from
// Monday 03-09 to Sunday 03-15.
func dateCases() []Case {
	return []Case{
		// d02 is the first millisecond of today, d03 the last of yesterday,
		// d04 the first of tomorrow, d15 01:00 (yesterday in UTC).
		list("today", where(query.Today(created)), "d01", "d02", "d15"),
		list("today in another zone", where(query.Today(created).InZone("UTC")), "d01", "d04"),
		list("yesterday", where(query.Yesterday(created)), "d03"),
		list("tomorrow", where(query.Tomorrow(created)), "d04"),
		list("before today", where(query.BeforeToday(created)), "d03", "d05", "d06", "d07", "d09", "d10", "d11", "d12"),
		list("this week", where(query.ThisWeek(created)), "d01", "d02", "d03", "d04", "d05", "d15", "d19"),
		list("last week", where(query.LastWeek(created)), "d06", "d07"),
		list("next week", where(query.NextWeek(created)), "d08"),
		list("this month", where(query.ThisMonth(created)),
			"d01", "d02", "d03", "d04", "d05", "d06", "d07", "d08", "d09", "d15", "d19", "d20"),
		list("last month", where(query.LastMonth(created)), "d10", "d11"),
		list("recent days", where(query.RecentDays(created, 3)), "d01", "d02", "d03", "d05", "d15"),
		list("recent one day is today", where(query.RecentDays(created, 1)), "d01", "d02", "d15"),
		list("earlier days", where(query.EarlierDays(created, 3)), "d06", "d07", "d09", "d10", "d11", "d12"),
		// eventTime is Now minus version days.
		list("recent days top-level", where(query.RecentDays("eventTime", 3)),
			"d02", "d04", "d07", "d09", "d12", "d14", "d15", "d19", "d20"),
		list("yesterday top-level", where(query.Yesterday("eventTime")), "d02", "d07", "d12", "d15", "d19"),
		list("date inside elem match", where(query.ElemMatch(scores, query.BeforeToday(""))),
			"d01", "d02", "d03", "d04", "d06", "d08", "d11", "d20"),
	}
}

func sortCases() []Case {
	return []Case{
		// missing < null < numbers (10 == 10.0, ties by ID) < strings.
		list("sort mixed types ascending", query.Query{Sort: []query.Sort{query.SortAsc(qty)}},
			"d08", "d07", "d16", "d04", "d06", "d10", "d02", "d13", "d14", "d09", "d19", "d20",
			"d01", "d03", "d15", "d12", "d11", "d05"),
		// Descending reverses the ranks too; ties stay in ID order.
		list("sort mixed types descending", query.Query{Sort: []query.Sort{query.SortDesc(qty)}},
			"d05", "d11", "d12", "d01", "d03", "d15", "d20", "d19", "d09", "d14", "d13", "d02",
			"d10", "d06", "d04", "d16", "d07", "d08"),
		list("sort two keys", query.Query{
			Condition: query.Tenant("t1"),
			Sort:      []query.Sort{query.SortDesc(isOn), query.SortAsc(price)},
		}, "d10", "d06", "d19", "d20", "d13", "d01", "d03", "d09", "d15", "d02", "d12", "d07"),
		list("sort strings byte-wise", query.Query{Sort: []query.Sort{{Field: name}}},
			"d19", "d06", "d01", "d03", "d05", "d12", "d14", "d10", "d16", "d08", "d02", "d07",
			"d09", "d04", "d11", "d13", "d15", "d20"),
		list("sort objects compare equal", query.Query{Sort: []query.Sort{query.SortAsc(address)}},
			"d11", "d13", "d16", "d19", "d05", "d01", "d02", "d03", "d04", "d06", "d07", "d08",
			"d09", "d10", "d12", "d14", "d15", "d20"),
		list("sort arrays first descending", query.Query{Sort: []query.Sort{query.SortDesc(tags)}, Limit: 17},
			"d01", "d02", "d03", "d04", "d06", "d07", "d08", "d09", "d10", "d11", "d12", "d13",
			"d14", "d16", "d19", "d05", "d15"),
		list("sort bools", query.Query{Sort: []query.Sort{query.SortAsc(isOn)}},
			"d07", "d02", "d05", "d09", "d12", "d15", "d01", "d03", "d06", "d08", "d10", "d11",
			"d13", "d14", "d16", "d19", "d20", "d04"),
		list("sort by id descending", query.Query{Sort: []query.Sort{query.SortDesc("aggregateId")}},
			"d20", "d19", "d16", "d15", "d14", "d13", "d12", "d11", "d10", "d09", "d08", "d07",
			"d06", "d05", "d04", "d03", "d02", "d01"),
		list("sort direction ignores case", query.Query{Sort: []query.Sort{{Field: "version", Direction: "desc"}}, Limit: 6},
			"d08", "d13", "d03", "d10", "d05", "d06"),
		list("sort with limit", query.Query{Sort: []query.Sort{query.SortDesc("version")}, Limit: 9},
			"d08", "d13", "d03", "d10", "d05", "d06", "d16", "d01", "d11"),
		list("limit", query.Query{Limit: 3}, "d01", "d02", "d03"),
		list("sort missing field keeps id order", query.Query{Sort: []query.Sort{query.SortDesc("state.nothing")}, Limit: 4},
			"d01", "d02", "d03", "d04"),
		single("single", where(query.Eq(name, "Beta")), "d03"),
		single("single takes the first in order", query.Query{Sort: []query.Sort{query.SortDesc(price)}}, "d08"),
		single("single of many without sort", where(query.Tenant("t2")), "d04"),
		single("single without result", where(query.Eq(name, "nobody")), ""),
		single("single ignores limit", query.Query{Condition: query.Owner("u3"), Limit: 7}, "d04"),
		count("count all", query.All(), 18),
		count("count tenant", query.Tenant("t2"), 6),
		count("count deleted any", query.Deleted(query.AnyDeletion), 20),
		count("count deleted only", query.Deleted(query.DeletedOnly), 2),
		count("count condition", query.Gt(qty, 5), 7),
		count("count none", query.Eq(name, "nobody"), 0),
	}
}

// By price ascending the active documents are: d04 d10 d11 d06 d16 | d09
// d14 d19 d20 d05 | d13 d01 d15 d07 d03 | d02 d12 d08 (d14 and d19 tie at
// 6 and stay in ID order).
func pageCases() []Case {
	byPrice := func(index, size int) query.PagedQuery {
		return query.PagedQuery{
			Sort:       []query.Sort{query.SortAsc(price)},
			Pagination: query.Pagination{Index: index, Size: size},
		}
	}
	byVersion := func(index, size int) query.PagedQuery {
		return query.PagedQuery{
			Condition:  query.Tenant("t2"),
			Sort:       []query.Sort{query.SortDesc("version")},
			Pagination: query.Pagination{Index: index, Size: size},
		}
	}
	return []Case{
		paged("page one", byPrice(1, 5), 18, "d04", "d10", "d11", "d06", "d16"),
		paged("page two", byPrice(2, 5), 18, "d09", "d14", "d19", "d20", "d05"),
		paged("last partial page", byPrice(4, 5), 18, "d02", "d12", "d08"),
		paged("page past the end", byPrice(5, 5), 18),
		paged("default pagination", byPrice(0, 0), 18,
			"d04", "d10", "d11", "d06", "d16", "d09", "d14", "d19", "d20", "d05"),
		paged("page with condition", byVersion(1, 2), 6, "d08", "d05"),
		paged("last page with condition", byVersion(3, 2), 6, "d04", "d14"),
		paged("page of nothing", query.PagedQuery{Condition: query.Eq(name, "nobody")}, 0),
		paged("page counts deleted when named", query.PagedQuery{
			Condition:  query.Deleted(query.DeletedOnly),
			Pagination: query.Pagination{Index: 2, Size: 1},
		}, 2, "d18"),
	}
}
