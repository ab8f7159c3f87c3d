package sqlstore

import (
	"context"
	"fmt"
)

// PurgeBatch bounds how many expired records (idempotency keys, prepare
// keys) one purge statement deletes, so that no statement holds up other
// writers for long.
const PurgeBatch = 1000

// Purge deletes expired records of what ("idempotency", "prepare keys")
// with batch, which deletes up to PurgeBatch of them and returns how many,
// until none is left or ctx is done; it returns how many it deleted in all.
func Purge(ctx context.Context, d *Dialect, what string, batch func(ctx context.Context) (int64, error)) (int64, error) {
	var total int64
	for {
		n, err := batch(ctx)
		total += n
		if err != nil {
			return total, fmt.Errorf("%s: %s purge: %w", d.Name, what, err)
		}
		if n < PurgeBatch {
			return total, nil
		}
	}
}
