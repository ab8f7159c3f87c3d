// Package sqlmigrate reads versioned SQL migrations from an embedded file
// system. The sqlite and postgres adapters apply them, each under its own
// database's lock, and record them in a migrations table.
//
// A component (the event store of one context, the prepare-key tables, ...)
// has a directory of files named NNNN_description.sql. Versions start at 1,
// rise by one, and never change once released: a new schema change is a new
// file. Files may use the placeholder {{prefix}}, replaced by the
// component's table prefix, so that one set of files serves every bounded
// context sharing a database.
package sqlmigrate
