package command_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/aggregate"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/eventstore"
)

// BenchmarkCreateID derives the ID of a create sent without one, unkeyed
// and keyed, in the same run.
func BenchmarkCreateID(b *testing.B) {
	reqs := make([]string, 1024)
	for i := range reqs {
		reqs[i] = factum.NewID()
	}
	for _, bc := range []struct {
		name string
		key  []byte
	}{{"unkeyed", nil}, {"keyed", testIDKey}} {
		b.Run(bc.name, func(b *testing.B) {
			g := newKeyedGateway(b, bc.key)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				_ = g.CreateID(shop, "acme", reqs[i%len(reqs)])
				i++
			}
		})
		b.Run(bc.name+"-parallel", func(b *testing.B) {
			g := newKeyedGateway(b, bc.key)
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				i := 0
				for pb.Next() {
					_ = g.CreateID(shop, "acme", reqs[i%len(reqs)])
					i++
				}
			})
		})
	}
}

// BenchmarkSendCreateWithoutID sends creates without an ID through a
// gateway whose bus discards them, with no pre-check: the gateway's own
// path, unkeyed and keyed, in the same run.
func BenchmarkSendCreateWithoutID(b *testing.B) {
	def := aggregate.New[struct{}](shop.Context, shop.Aggregate,
		aggregate.Handle(func(context.Context, struct{}, openOrder) ([]any, error) { return nil, nil }, aggregate.Create()))
	reg, err := aggregate.NewRegistry(def)
	if err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name string
		key  []byte
	}{{"unkeyed", nil}, {"keyed", testIDKey}} {
		b.Run(bc.name, func(b *testing.B) {
			g, err := command.NewGateway(command.GatewayConfig{Registry: reg, Bus: discardBus{}, Waiters: command.NewWaiters(),
				Store: eventstore.NewMemory(), IDKey: bc.key})
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				cmd := factum.NewCommand(shop.WithID("").WithTenant("acme"), openOrder{})
				cmd.RequestID = "req-" + strconv.Itoa(i)
				if _, err := g.Send(ctx, cmd); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}
