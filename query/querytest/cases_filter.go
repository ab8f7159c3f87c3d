package querytest

import (
	"github.com/factum-go/factum/query"
)

// Paths into the data set's states.
const (
	name    = "state.name"
	qty     = "state.qty"
	price   = "state.price"
	isOn    = "state.active"
	tags    = "state.tags"
	items   = "state.items"
	address = "state.address"
	city    = "state.address.city"
	created = "state.createdAt"
	note    = "state.note"
	scores  = "state.scores"
)

func logicCases() []Case {
	return []Case{
		list("all", where(query.All()), active()...),
		list("zero condition is all", query.Query{}, active()...),
		list("and", where(query.And(query.Eq(isOn, true), query.Gt(qty, 5))),
			"d01", "d03", "d11", "d19", "d20"),
		list("or", where(query.Or(query.Eq(name, "Beta"), query.Eq(qty, 100))), "d03", "d11"),
		// Neither true nor false: the string "true" and the missing field.
		list("nor", where(query.Nor(query.Eq(isOn, true), query.Eq(isOn, false))), "d04", "d07"),
		list("empty and matches all", where(query.And()), active()...),
		list("empty or matches none", where(query.Or())),
		list("empty nor matches all", where(query.Nor()), active()...),
		list("nested and or nor", where(query.And(
			query.Or(query.Eq(city, "Paris"), query.Eq(city, "London")),
			query.Nor(query.Eq("ownerId", "u1")))),
			"d06", "d09", "d14"),
	}
}

func identityCases() []Case {
	return []Case{
		list("id", where(query.ID("d05")), "d05"),
		list("id of a deleted document is excluded", where(query.ID("d17"))),
		list("ids", where(query.IDs("d03", "d01", "d99")), "d01", "d03"),
		list("aggregate id", where(query.AggregateID("d02")), "d02"),
		list("aggregate ids", where(query.AggregateIDs("d20", "d10")), "d10", "d20"),
		list("tenant", where(query.Tenant("t2")), "d04", "d05", "d08", "d11", "d14", "d16"),
		list("owner", where(query.Owner("u3")), "d04", "d09", "d14", "d19"),
		list("empty owner by field", where(query.Eq("ownerId", "")), "d05"),
		list("deleted only", where(query.Deleted(query.DeletedOnly)), "d17", "d18"),
		list("deleted any", where(query.Deleted(query.AnyDeletion)),
			"d01", "d02", "d03", "d04", "d05", "d06", "d07", "d08", "d09", "d10",
			"d11", "d12", "d13", "d14", "d15", "d16", "d17", "d18", "d19", "d20"),
		list("deleted active", where(query.Deleted(query.Active)), active()...),
		list("deleted state ignores case", where(query.Condition{Operator: query.OpDeleted, Value: "deleted"}), "d17", "d18"),
		list("deleted field named turns the default off", where(query.True("deleted")), "d17", "d18"),
		list("deleted false by field", where(query.Eq("deleted", false)), active()...),
		list("deleted any with tenant", where(query.And(query.Tenant("t1"), query.Deleted(query.AnyDeletion))),
			"d01", "d02", "d03", "d06", "d07", "d09", "d10", "d12", "d13", "d15", "d17", "d19", "d20"),
		list("deletion named inside or", where(query.Or(query.ID("d18"), query.And(query.Deleted(query.Active), query.ID("d01")))),
			"d01", "d18"),
	}
}

func comparisonCases() []Case {
	return []Case{
		list("eq string is case sensitive", where(query.Eq(name, "alpha")), "d02"),
		// d03 holds 10.0: numbers compare as numbers.
		list("eq number", where(query.Eq(qty, 10)), "d01", "d03", "d15"),
		list("eq string never equals number", where(query.Eq(qty, "7")), "d05"),
		list("eq number never equals string", where(query.Eq(qty, 7)), "d20"),
		list("eq bool", where(query.Eq(isOn, true)),
			"d01", "d03", "d06", "d08", "d10", "d11", "d13", "d14", "d16", "d19", "d20"),
		list("eq bool-like string", where(query.Eq(isOn, "true")), "d04"),
		list("eq nested", where(query.Eq(city, "paris")), "d02"),
		list("eq top-level number", where(query.Eq("version", 9)), "d08"),
		// NE is NOT EQ: other types, null and missing fields match.
		list("ne bool", where(query.Ne(isOn, true)), "d02", "d04", "d05", "d07", "d09", "d12", "d15"),
		list("ne number", where(query.Ne(qty, 10)),
			"d02", "d04", "d05", "d06", "d07", "d08", "d09", "d10", "d11", "d12", "d13", "d14", "d16", "d19", "d20"),
		list("gt number", where(query.Gt(qty, 5)), "d01", "d03", "d11", "d12", "d15", "d19", "d20"),
		list("gte number", where(query.Gte(qty, 10)), "d01", "d03", "d11", "d12", "d15"),
		list("lt number skips null", where(query.Lt(qty, 2)), "d04", "d06", "d10", "d16"),
		list("lte number", where(query.Lte(qty, 2)), "d02", "d04", "d06", "d10", "d16"),
		list("gt fraction", where(query.Gt(qty, 1.4)),
			"d01", "d02", "d03", "d09", "d10", "d11", "d12", "d13", "d14", "d15", "d19", "d20"),
		list("gt string is byte-wise", where(query.Gt(name, "a")),
			"d02", "d04", "d07", "d09", "d11", "d13", "d15", "d20"),
		list("lt string", where(query.Lt(name, "B")), "d01", "d06", "d19"),
		list("gte string", where(query.Gte(name, "pi")), "d20"),
		list("lte string", where(query.Lte(name, "")), "d19"),
		list("gt string bound only matches strings", where(query.Gt(qty, "5")), "d05"),
		list("between numbers is inclusive", where(query.Between(price, 5, 10)),
			"d01", "d05", "d09", "d13", "d14", "d19", "d20"),
		list("between strings", where(query.Between(name, "B", "Z")),
			"d03", "d05", "d10", "d12", "d14", "d16"),
		list("between empty range", where(query.Between(price, 10, 5))),
		list("gt top-level version", where(query.Gt("version", 5)), "d03", "d08", "d10", "d13"),
	}
}

func setCases() []Case {
	return []Case{
		list("in strings", where(query.In(city, "Paris", "Rome", "Tokyo")),
			"d01", "d06", "d07", "d08", "d09", "d14"),
		list("in mixed types", where(query.In(qty, 2, "7", true)), "d02", "d05"),
		list("in slice argument", where(query.In(qty, []int{0, 20})), "d06", "d12"),
		list("not in matches missing and null", where(query.NotIn(city, "Paris", "London")),
			"d02", "d04", "d05", "d07", "d08", "d10", "d11", "d12", "d13", "d15", "d16", "d19", "d20"),
		// No implicit array matching: only d05, whose tags is the string "red".
		list("in on an array field", where(query.In(tags, "red")), "d05"),
		list("eq on an array field", where(query.Eq(tags, "red")), "d05"),
		list("all in strings", where(query.AllIn(tags, "red", "blue")), "d01", "d04", "d07", "d16"),
		list("all in numbers", where(query.AllIn(scores, 2, 3)), "d01", "d08", "d20"),
		list("all in one value needs an array", where(query.AllIn(tags, "red")),
			"d01", "d04", "d07", "d09", "d11", "d14", "d16"),
		// d01 has an A1 and a quantity of 5, but not in the same element.
		list("elem match objects", where(query.ElemMatch(items, query.Eq("sku", "A1"), query.Gte("qty", 3))),
			"d07", "d16"),
		list("elem match scalars", where(query.ElemMatch(tags, query.StartsWith("", "gr"))),
			"d04", "d11", "d13", "d16"),
		list("elem match numbers", where(query.ElemMatch(scores, query.Gt("", 4))), "d04", "d06", "d11"),
		list("elem match or", where(query.ElemMatch(items, query.Or(query.Eq("sku", "C3"), query.Gt("qty", 6)))),
			"d04", "d07", "d16"),
		list("elem match on a non-array", where(query.ElemMatch(address, query.Eq("city", "Paris")))),
		list("elem match empty arrays never match", where(query.ElemMatch(items, query.All())),
			"d01", "d02", "d04", "d06", "d07", "d09", "d16", "d20"),
	}
}

func stringCases() []Case {
	return []Case{
		list("contains", where(query.Contains(name, "lph")), "d01", "d02"),
		list("contains ignore case", where(query.Contains(name, "LPH").IgnoreCase()), "d01", "d02", "d06"),
		list("contains empty matches every string", where(query.Contains(name, "")), active()...),
		list("contains only strings", where(query.Contains(qty, "7")), "d05"),
		list("starts with", where(query.StartsWith(name, "al")), "d02"),
		list("starts with ignore case", where(query.StartsWith(name, "al").IgnoreCase()), "d01", "d02", "d06"),
		list("ends with", where(query.EndsWith(name, "ta")), "d03", "d05", "d08", "d09", "d10", "d11"),
		list("ends with ignore case", where(query.EndsWith(name, "TA").IgnoreCase()), "d03", "d05", "d08", "d09", "d10", "d11"),
		list("contains ignore case nested", where(query.Contains(note, "NOTE").IgnoreCase()), "d07"),
		// Only ASCII folds: É is not é.
		list("ignore case folds ascii only", where(query.Contains(note, "élan").IgnoreCase())),
		list("ignore case folds ascii letters around non-ascii", where(query.StartsWith(note, "ÉLAN").IgnoreCase()), "d12"),
		list("non-ascii exact", where(query.Contains(note, "Élan")), "d12"),
		list("like wildcards are literal", where(query.Contains(name, "%"))),
		list("underscore is literal", where(query.StartsWith(name, "_"))),
	}
}

func presenceCases() []Case {
	return []Case{
		list("null matches missing and null", where(query.Null(note)),
			"d02", "d04", "d06", "d08", "d11", "d13", "d14", "d15", "d16", "d20"),
		list("not null", where(query.NotNull(note)), "d01", "d03", "d05", "d07", "d09", "d10", "d12", "d19"),
		list("exists includes null", where(query.Exists(note, true)),
			"d01", "d02", "d03", "d05", "d07", "d09", "d10", "d12", "d13", "d19"),
		list("exists false", where(query.Exists(note, false)), "d04", "d06", "d08", "d11", "d14", "d15", "d16", "d20"),
		list("exists without value means true", where(query.Condition{Field: note, Operator: query.OpExists}),
			"d01", "d02", "d03", "d05", "d07", "d09", "d10", "d12", "d13", "d19"),
		// d05's address is null: a path through null is missing.
		list("exists nested", where(query.Exists(city, true)),
			"d01", "d02", "d03", "d04", "d06", "d07", "d08", "d09", "d10", "d12", "d14", "d15", "d20"),
		list("null object", where(query.Null(address)), "d05", "d11", "d13", "d16", "d19"),
		list("true", where(query.True(isOn)),
			"d01", "d03", "d06", "d08", "d10", "d11", "d13", "d14", "d16", "d19", "d20"),
		list("false", where(query.False(isOn)), "d02", "d05", "d09", "d12", "d15"),
		// Digit segments name object keys: they never index an array.
		list("paths never index arrays", where(query.Exists("state.tags.0", true))),
		list("path through a scalar is missing", where(query.Null("state.name.first")), active()...),
	}
}
