package sqlmigrate_test

import (
	"fmt"
	"testing/fstest"

	"github.com/factum-go/factum/internal/sqlmigrate"
)

func ExampleLoad() {
	files := fstest.MapFS{
		"migrations/0001_init.sql": {Data: []byte("CREATE TABLE {{prefix}}events (id TEXT);")},
	}
	ms, err := sqlmigrate.Load(files, "migrations", "eventstore:shop", "factum_shop_")
	fmt.Println(len(ms), ms[0].Version, ms[0].SQL, err)
	// Output: 1 1 CREATE TABLE factum_shop_events (id TEXT); <nil>
}
