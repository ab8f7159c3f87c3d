package pgserver_test

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/factum-go/factum/internal/pgserver"
	"github.com/jackc/pgx/v5"
)

// A private server survives an immediate (crash-like) stop: what was
// committed before it is there after crash recovery.
func TestRestartKeepsCommittedRows(t *testing.T) {
	pg := pgserver.Start(t)
	ctx := context.Background()
	url, err := pg.CreateDatabase(ctx, "example")
	if err != nil {
		t.Fatal(err)
	}
	exec := func(sql string) {
		t.Helper()
		conn, err := pgx.Connect(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, sql); err != nil {
			t.Fatal(err)
		}
	}
	exec(`CREATE TABLE t (n int); INSERT INTO t VALUES (1)`)
	if err := pg.Restart(syscall.SIGQUIT, 100*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var n int
	if err := conn.QueryRow(ctx, `SELECT n FROM t`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("after crash recovery: %d %v", n, err)
	}
}

// Start a server for a test and connect to it. (Compiled, not run: it
// needs a test.)
func Example() {
	var t *testing.T // a test's t
	pg := pgserver.Start(t)
	url, _ := pg.CreateDatabase(context.Background(), "app")
	_ = url
}
