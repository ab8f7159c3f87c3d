//go:build race

package command_test

// raceDetector reports whether the race detector is on: sync.Pool then
// drops some of what it is given, so pooled values are allocated again.
const raceDetector = true
