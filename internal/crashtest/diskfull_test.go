package crashtest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/factum-go/factum/internal/crashtest"
	"github.com/factum-go/factum/internal/serveproc"
)

// fillDisk writes 1 MiB filler files into dir until the file system is
// full and returns them.
func fillDisk(dir string) ([]string, error) {
	var names []string
	chunk := make([]byte, 1<<20)
	for i := 0; ; i++ {
		name := filepath.Join(dir, fmt.Sprintf("filler-%d", i))
		err := os.WriteFile(name, chunk, 0o600)
		if err != nil {
			os.Remove(name)
			if len(names) == 0 {
				return nil, err
			}
			return names, nil
		}
		names = append(names, name)
		if i > 10000 {
			return names, fmt.Errorf("the file system never filled")
		}
	}
}

// diskFull explains compensation records of event functions that failed
// because the disk was full.
func diskFull(e json.RawMessage) bool {
	s := strings.ToLower(string(e))
	for _, m := range []string{"full", "no space", "i/o error", "ioerr"} {
		if strings.Contains(s, m) {
			return true
		}
	}
	return false
}

// serve's data directory on a small tmpfs that the test fills up under
// load until requests fail: appends fail while the disk is full, serve stays up, and once a
// filler is deleted it goes on; the audit holds. Skipped where a tmpfs
// cannot be mounted (TestEventStoreOutOfSpace in package sqlite covers
// the store's side everywhere).
func TestServeDiskFull(t *testing.T) {
	skipShort(t)
	bin := buildServe(t)
	mnt := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=96m", "tmpfs", mnt).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs here (%v: %s)", err, bytes.TrimSpace(out))
	}
	dataDir := filepath.Join(mnt, "data")
	var proc *serveproc.Process
	// A round in which no append needed the disk to grow (a slow,
	// loaded machine sends less) is not a failure; a run in which the
	// fault never struck is.
	struck := 0
	t.Cleanup(func() {
		if proc != nil && !proc.Exited() {
			proc.Kill()
		}
		if out, err := exec.Command("umount", mnt).CombinedOutput(); err != nil {
			t.Errorf("umount: %v %s", err, out)
		}
	})
	res := crashtest.Rounds(t, crashtest.RoundsConfig{
		Seed:   crashtest.Seed(t),
		Rounds: rounds(),
		Start: func(ctx context.Context) (*serveproc.Process, error) {
			p, err := serveproc.Start(ctx, serveproc.Options{Binary: bin, DataDir: dataDir})
			proc = p
			return p, err
		},
		Setup: restock,
		Fault: func(ctx context.Context, r *crashtest.Round) error {
			before := r.Ledger.UnknownTotal()
			fillers, err := fillDisk(mnt)
			if err != nil {
				return err
			}
			// SQLite fails an append only when a file must grow (a
			// checkpoint extending the database, the WAL past its
			// reused pages), so the disk stays full until a request
			// fails (at most 20 s), then one second more.
			full := time.Now()
			for r.Ledger.UnknownTotal() == before && time.Since(full) < 20*time.Second {
				time.Sleep(20 * time.Millisecond)
			}
			time.Sleep(time.Second)
			failed := r.Ledger.UnknownTotal() - before
			for _, f := range fillers {
				if err := os.Remove(f); err != nil {
					return err
				}
			}
			wctx, cancel := context.WithTimeout(ctx, 60*time.Second)
			defer cancel()
			d, err := crashtest.AwaitAck(wctx, r.Client, r.Ledger, "probe-"+strings.Repeat("x", r.Index+1))
			r.Recovered(d)
			t.Logf("round %d: disk full for %v (%d MiB of fillers): %d requests failed", r.Index, time.Since(full).Round(time.Millisecond), len(fillers), failed)
			if failed > 0 {
				struck++
			}
			return err
		},
		Load:  crashtest.LoadConfig{OrderEvery: 8, SKUs: inventories},
		Audit: crashtest.AuditConfig{Explain: diskFull},
	})
	if struck == 0 {
		t.Error("no request failed in any round while the disk was full: the fault did not strike")
	}
	checkSagas(t, res)
}
