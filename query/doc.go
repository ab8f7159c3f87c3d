// Package query is factum's query language for JSON documents, such as
// snapshots: a Condition tree, projection, multi-field sort and 1-based
// pagination, with guards on by default; its JSON form for HTTP; a Planner
// that checks queries and lowers them to a small core; and an in-memory
// evaluator. The SQL translators (package sqlquery) implement the same core
// with the same semantics, and the corpus in package querytest holds every
// backend to it, order included.
//
// # Conditions
//
// A Condition is an operator on a field path and a value, or on child
// conditions:
//
//   - logical: AND, OR, NOR (over children), ALL;
//   - identity: ID, IDS, AGGREGATE_ID, AGGREGATE_IDS, TENANT_ID, OWNER_ID,
//     DELETED (ACTIVE, DELETED or ALL) — on the standard Fields;
//   - comparison: EQ, NE, GT, GTE, LT, LTE, BETWEEN (inclusive);
//   - sets and arrays: IN, NOT_IN, ALL_IN, ELEM_MATCH;
//   - strings: CONTAINS, STARTS_WITH, ENDS_WITH, optionally ignoring ASCII
//     case;
//   - presence and type: NULL, NOT_NULL, TRUE, FALSE, EXISTS;
//   - date-relative, on epoch-millisecond numbers: TODAY, YESTERDAY,
//     TOMORROW, BEFORE_TODAY, THIS_WEEK, NEXT_WEEK, LAST_WEEK, THIS_MONTH,
//     LAST_MONTH, RECENT_DAYS n, EARLIER_DAYS n.
//
// Field paths are dotted names of ASCII letters, digits and '_' (see
// ValidatePath), checked against that allow-list before anything runs.
// Each segment names an object key; a path never indexes into an array and
// never traverses one implicitly: "items.sku" is missing when items is an
// array. ELEM_MATCH and ALL_IN are the array operators.
//
// # Type semantics
//
// A field is missing (absent, or a path running into a non-object), null,
// a bool, a number, a string, an array or an object. Condition values are
// strings, numbers (float64) and bools; null is tested with NULL and
// NOT_NULL, never with EQ.
//
//   - Types never convert: the string "7" does not equal the number 7, and
//     true does not equal 1. A comparison with a value of another type, a
//     missing field or null is false.
//   - Numbers compare as IEEE-754 doubles, so 1 equals 1.0. Integers beyond
//     ±2^53 are outside the contract: values are refused, stored ones may
//     compare inexactly on some backends.
//   - Strings compare byte-wise (UTF-8 code unit order, which is code point
//     order), without collation. GT, GTE, LT, LTE and BETWEEN apply to
//     numbers and strings only.
//   - Times are JSON numbers of milliseconds since the Unix epoch. A time
//     stored as a string compares as a string and never matches a
//     date-relative operator.
//   - NE and NOT_IN are the exact negations of EQ and IN: they match
//     missing and null fields and values of other types. NOR is NOT OR.
//     Logic is two-valued everywhere: SQL translators wrap anything that
//     could be SQL NULL.
//   - NULL matches a missing field or null; NOT_NULL a present, non-null
//     one; EXISTS a present one (null included), or with value false a
//     missing one. TRUE and FALSE match the JSON bools only.
//   - IN and EQ on an array field are false: no implicit element matching.
//     ALL_IN matches an array holding an element equal (as EQ) to each
//     value. ELEM_MATCH matches an array with an element satisfying all its
//     children; inside them paths are relative to the element and the empty
//     path is the element itself.
//   - CONTAINS, STARTS_WITH and ENDS_WITH match strings only; with
//     ignoreCase both sides fold A-Z to a-z and nothing else, because SQL
//     backends fold non-ASCII letters differently.
//   - Date-relative operators are resolved when the query is planned,
//     against the Planner's clock and location (or the condition's zoneId),
//     into half-open millisecond ranges [start, end). Weeks start on
//     Monday. RECENT_DAYS n covers today and the n-1 days before it;
//     EARLIER_DAYS n is everything before that.
//
// # Sorting
//
// Sorting uses one total order for every type. Ascending, values rank
// missing < null < false < true < numbers < strings < arrays and objects;
// numbers order numerically, strings byte-wise, and arrays and objects
// compare equal to each other. Descending reverses that order completely,
// so missing fields come last. After the given keys, ties are broken by the
// document ID (Fields.ID) ascending, which a Plan states as its last key,
// so results and pages are identical on every backend.
//
// # Projection and pagination
//
// Include keeps only the listed paths (and the ID field unless it is
// excluded); Exclude removes paths. Pages are 1-based. A list query's limit
// and a page's size default and are bounded by Limits, as are how deep a
// page may reach, the number of condition nodes and values, sort keys and
// projection paths. Every guard refuses with an IllegalArgument
// *factum.Error that names it.
//
// # Decoding JSON
//
// ParseCondition, ParseQuery, ParsePagedQuery (and json.Unmarshal into a
// Condition) read a condition tree in one pass, in time and memory linear
// in its size, and refuse a tree nested deeper than MaxDecodeDepth or
// holding more than MaxDecodeNodes nodes as soon as they reach the
// ceiling, before building any more of it: a request's condition cannot
// cost more than its size, however it nests. The Planner's Limits apply
// afterwards.
//
// # Deletion and tenants
//
// Deleted documents (Fields.Deleted is true) are excluded unless the
// condition names deletion (NamesDeletion). A Planner with a Tenant ANDs
// "tenant equals Tenant" to every condition, whatever the query says.
//
// # Running queries
//
// A Planner turns a Query, PagedQuery or Condition into a Plan: checked
// against the limits, lowered to core operators, with an explicit total
// sort and window. Select, Execute and Count run plans over documents in
// memory; Compile gives a reusable Matcher.
package query
