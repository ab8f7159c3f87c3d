// Package summariestest is the oracle of the order example's durable
// summaries projection (order.SummariesProjection): Fold computes its
// read model from the log in memory, independently of its SQL, and
// Snapshot loads the tables a projection wrote together with its
// checkpoint, so a test compares the two after crashes. Its kill test
// runs `factum serve` as a child process and kills it under load.
package summariestest
