// Package bustest is the contract kit for command.Bus: every bus, in-process
// or networked, in factum or outside it, proves itself by calling [Run]
// from a test, the way testing/fstest.TestFS checks a file system.
//
// The kit wires the bus under test to a processor and a sink of its own and
// checks what a gateway relies on: one aggregate's commands are processed
// one at a time, in the order one sender sent them; a blocked aggregate
// does not stop the others; the bus is bounded (a full bus pushes back
// with TooManyRequests, never grows without end); a closed bus refuses
// with TooManyRequests; and no command the bus accepted is lost or
// processed twice, even when it is shut down while senders are busy.
package bustest
