// Package sqlquery translates query plans into SQL for SQLite (its JSON
// functions over JSON text) and PostgreSQL (jsonb), with the exact
// semantics of package query: the same documents match, in the same order,
// as with the in-memory evaluator. The corpus of package querytest runs
// against both databases in this package's tests, over a table with a
// column per snapshot field and over a table holding whole documents.
//
// Values are always bound arguments, never written into the SQL. Field
// paths, checked against the allow-list of query.ValidatePath, become JSON
// path text (every key quoted, so a digit key never indexes an array) or
// PostgreSQL "->" steps; column names come only from the Schema.
//
// How the semantics are kept:
//
//   - every predicate is two-valued where it matters: under NOT, NE,
//     NOT_IN and NOR comparisons are wrapped in COALESCE(..., FALSE), so
//     a negation never meets SQL NULL; elsewhere in the WHERE clause of
//     Find and Count, where NULL already counts as false, they stay bare,
//     so that an index on a field's expression can serve them (Where,
//     whose result may be negated by its caller, always wraps them);
//   - values are extracted by JSON type (json_type, jsonb_typeof): a
//     string never equals a number, true is not 1, null is not missing;
//   - numbers compare as float8 on PostgreSQL, like Go's float64, and
//     strings in byte order (COLLATE "C"; SQLite's BINARY);
//   - CONTAINS, STARTS_WITH and ENDS_WITH use instr, substr, strpos,
//     starts_with and right, so '%' and '_' are literal, and fold ASCII
//     only (SQLite's built-in lower, PostgreSQL's translate);
//   - arrays are walked with json_each / jsonb_array_elements in EXISTS
//     subqueries, only when the field is an array;
//   - ORDER BY sorts each key by JSON type rank, then number, then string,
//     all in the key's direction, ending with the plan's ID key.
//
// The caller reads whole documents and applies the plan's projection in
// Go (query.Projection.Apply), so projections are identical too.
package sqlquery
