package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// lockDataDir takes an exclusive advisory lock on the data directory for
// the life of the process's store, so that a second process (a bench run
// in process, another serve) is refused instead of writing into a database
// a running service has open. The lock ends when the returned function is
// called or the process exits.
func lockDataDir(dir string) (unlock func() error, err error) {
	f, err := os.OpenFile(filepath.Join(dir, "factum.lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("data directory lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("data directory %s is in use by another factum process (a running serve?): stop it, or pick another --data-dir", dir)
		}
		return nil, fmt.Errorf("data directory lock: %w", err)
	}
	return f.Close, nil
}
