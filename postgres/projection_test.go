package postgres

import (
	"context"
	"testing"

	"github.com/factum-go/factum/projection"
	"github.com/factum-go/factum/projection/projectiontest"
)

func TestProjectionStoreContract(t *testing.T) {
	projectiontest.Run(t, func(t *testing.T) projection.Store {
		st, err := NewProjectionStore(context.Background(), newTestDB(t, 4), "shop")
		if err != nil {
			t.Fatal(err)
		}
		return st
	})
}
