// Package pgserver runs a private PostgreSQL server for one test: initdb
// into a temporary directory, a random loopback port, the server as a child
// process of the test. Tests that restart the database, kill it or
// terminate its connections use it, so they disturb no other test and no
// shared server.
//
// The binaries come from PATH or /usr/lib/postgresql/*/bin (the newest).
// PostgreSQL refuses to run as root; when the test runs as root the server
// runs as the "postgres" user.
package pgserver
