// Package lincheck checks concurrent histories for linearizability with
// porcupine, for the contract kits, and explains a failure in the test log:
// the end of the longest linearizable prefix of each failing partition, with
// the model's state after each step, and the operations that could not be
// placed after it. Set FACTUM_PORCUPINE_DIR to a directory to keep
// porcupine's HTML visualisation of a failure there as well.
package lincheck
