// Package serveproc builds the factum binary and runs `factum serve` as a
// child process on a random loopback port, so tests can kill it with
// SIGKILL, restart it on the same data and talk to it only through its
// command line and HTTP API.
//
// The child gets the parent's environment without any FACTUM_ variable:
// everything it needs is passed as an explicit flag, so a developer's
// FACTUM_POSTGRES_URL cannot silently switch a SQLite test to PostgreSQL.
package serveproc
