// Package clustertest holds the fault tests of `factum serve` clustered:
// several serve processes (package serveproc) on one PostgreSQL database
// and one NATS server, driven by the crash harness's clients and audited
// by it (package crashtest), while an instance is killed. It has no code
// of its own beyond the tests.
package clustertest
