// Package crashtest is the crash harness: it drives `factum serve` (run by
// package serveproc) with many concurrent clients, records every
// acknowledged response in a Ledger, lets a fault strike (kill -9 of the
// server, a database restart, terminated connections), and audits the
// data afterwards through the HTTP API only:
//
//   - every acknowledged request is present exactly once, at the version
//     it was acknowledged with (Lookup, and the event log);
//   - every aggregate's versions are 1, 2, 3 … with no gap and no request
//     ID twice;
//   - the snapshot (the snapshotter consumer's output) catches up and
//     equals the fold of the events;
//   - the snapshot query store counts exactly the aggregates that exist;
//   - every compensation record is explained by the fault injected.
//
// CheckSagasComplete is a separate check (every acknowledged order leaves
// pending; reservations match), so a test can run it or not.
//
// Every random choice comes from one seed, printed by the test, so a
// failing round can be replayed with the seed (and the same timing luck).
package crashtest
