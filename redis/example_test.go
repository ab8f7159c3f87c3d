package redis_test

import (
	"context"
	"log"

	"github.com/factum-go/factum/redis"
)

// Open needs a running server, so this example is compiled but not run.
func ExampleOpen() {
	client, err := redis.Open(context.Background(), "redis://127.0.0.1:6379/0", 0)
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
}
