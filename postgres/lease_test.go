package postgres

import (
	"context"
	"testing"

	"github.com/factum-go/factum/event/leasetest"
)

func TestLeaseStoreContract(t *testing.T) {
	leasetest.Run(t, func(t *testing.T) leasetest.Store {
		st, err := NewCheckpointStore(context.Background(), newTestDB(t, 8), "shop")
		if err != nil {
			t.Fatal(err)
		}
		return st
	})
}
