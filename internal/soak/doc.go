// Package soak drives `factum serve` with a long mixed load — commands,
// queries, lookups, waits for every stage, Server-Sent Event streams
// (read to the end and abandoned midway), idempotent requests and waits
// that time out — while it samples the server's RSS, goroutines, threads
// and open files, so a test can tell a plateau from a leak.
package soak
