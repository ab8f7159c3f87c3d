// Package loadgen runs an operation a given number of times at a given
// concurrency and reports throughput and latency percentiles: the engine of
// `factum bench`, independent of what the operation sends.
package loadgen
