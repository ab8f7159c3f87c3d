// Package querytest holds the query corpus: a fixed data set of 20
// snapshot documents and a few hundred queries over it — every operator,
// type-semantics edge, projection, sort, pagination and guard of package
// query — each with the results every backend must give, in order.
//
// Run runs the corpus against any Evaluator, the way testing/fstest.TestFS
// checks a file system: the in-memory evaluator, the snapshot query
// service over each snapshot store, and the SQL translators all run the
// very same cases, so they answer every query identically.
package querytest
