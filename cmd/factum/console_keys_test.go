package main

import "github.com/factum-go/factum/auth"

// The console tests' API keys: root is an admin of every tenant; reader
// may read tenant acme and nothing else.
const (
	keyRoot   = "fk_root-0123456789abcdefghijklmnopqrstu"
	keyReader = "fk_reader-0123456789abcdefghijklmnopqr"
)

// rootKeyEntry is root's entry in a key file (auth.ParseKeys' format).
var rootKeyEntry = "root " + auth.HashKey(keyRoot) + " roles=admin"

// readerAndRoot accepts the reader's and root's keys.
var readerAndRoot = securityOptions{APIKeys: "reader " + auth.HashKey(keyReader) + " tenants=acme roles=read;" + rootKeyEntry}
