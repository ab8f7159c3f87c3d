package command_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/aggregate"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/eventstore"
	"github.com/google/uuid"
)

var (
	testIDKey  = []byte("an-ID-key-of-thirty-two-bytes-or-more-0123456789")
	otherIDKey = []byte("another-ID-key-of-thirty-two-bytes-or-more-012345")
	shop       = factum.NamedAggregate{Context: "shop", Aggregate: "order"}
)

// newKeyedGateway returns a gateway with ID key key (nil: none) over
// nothing: only its ID derivation is used.
func newKeyedGateway(t testing.TB, key []byte) *command.Gateway {
	t.Helper()
	reg, err := aggregate.NewRegistry()
	if err != nil {
		t.Fatal(err)
	}
	g, err := command.NewGateway(command.GatewayConfig{Registry: reg, Bus: discardBus{}, Waiters: command.NewWaiters(),
		Store: eventstore.NewMemory(), IDKey: key})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// discardBus accepts every command and does nothing with it.
type discardBus struct{}

func (discardBus) Send(context.Context, *factum.Command) error { return nil }

// With an ID key, the ID of a create sent without one is not the unkeyed
// derivation anyone can compute, nor another key's; it is the same on
// every gateway with the key, another for another tenant or request ID,
// and an RFC 9562 UUID version 8.
func TestKeyedCreateID(t *testing.T) {
	a, b := newKeyedGateway(t, testIDKey), newKeyedGateway(t, testIDKey)
	other := newKeyedGateway(t, otherIDKey)
	id := a.CreateID(shop, "acme", "req-1")
	tests := []struct {
		name string
		got  string
		same bool
	}{
		{"unkeyed derivation", command.CreateID(shop, "acme", "req-1"), false},
		{"another key", other.CreateID(shop, "acme", "req-1"), false},
		{"another gateway, same key", b.CreateID(shop, "acme", "req-1"), true},
		{"same gateway again", a.CreateID(shop, "acme", "req-1"), true},
		{"another tenant", a.CreateID(shop, "globex", "req-1"), false},
		{"another request ID", a.CreateID(shop, "acme", "req-2"), false},
		{"another aggregate type", a.CreateID(factum.NamedAggregate{Context: "shop", Aggregate: "cart"}, "acme", "req-1"), false},
		{"parts not run together", a.CreateID(shop, "acmer", "eq-1"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if (tt.got == id) != tt.same {
				t.Fatalf("%s gives %s, the keyed ID is %s; same = %v, want %v", tt.name, tt.got, id, tt.got == id, tt.same)
			}
		})
	}
	// The derivation is pinned: an ID a store holds must be derived the
	// same way by the next release.
	mac := hmac.New(sha256.New, testIDKey)
	mac.Write([]byte("factum/create-id\x00shop\x00order\x00acme\x00req-1\x00"))
	var u uuid.UUID
	copy(u[:], mac.Sum(nil))
	u[6], u[8] = u[6]&0x0f|0x80, u[8]&0x3f|0x80
	if id != u.String() {
		t.Fatalf("keyed ID %s, want %s", id, u)
	}
	if d := a.CreateID(shop, "", "req-1"); d != a.CreateID(shop, factum.DefaultTenant, "req-1") {
		t.Fatalf("no tenant gives %s, not the default tenant's ID", d)
	}
	for _, s := range []string{id, other.CreateID(shop, "acme", "req-1"), a.CreateID(shop, "globex", "req-9")} {
		u, err := uuid.Parse(s)
		if err != nil || u.Version() != 8 || u.Variant() != uuid.RFC4122 || u.String() != s {
			t.Fatalf("%s is not a canonical UUIDv8 (version %v, variant %v, err %v)", s, u.Version(), u.Variant(), err)
		}
		if err := factum.ValidateID("aggregate id", s); err != nil {
			t.Fatal(err)
		}
	}
}

// Without a key, a gateway gives the unkeyed derivation: the IDs stores
// already hold, pinned to one such ID (the console derives it too).
func TestUnkeyedCreateIDUnchanged(t *testing.T) {
	g := newKeyedGateway(t, nil)
	const want = "92be6641-ffc5-5a00-9163-702eb8a3c828"
	if got := g.CreateID(shop, "acme", "req-1"); got != want || command.CreateID(shop, "acme", "req-1") != want {
		t.Fatalf("unkeyed create ID %s, want %s", got, want)
	}
}

// A short key is refused with IllegalArgument caused by ErrIDKeyTooShort,
// and the error shows no key byte; the gateway keeps its own copy of the
// key, so a caller clearing its slice changes nothing.
func TestIDKeyChecked(t *testing.T) {
	reg, err := aggregate.NewRegistry()
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range [][]byte{{}, []byte("short-secret"), testIDKey[:command.MinIDKeyLen-1]} {
		_, err := command.NewGateway(command.GatewayConfig{Registry: reg, Bus: discardBus{}, Waiters: command.NewWaiters(),
			Store: eventstore.NewMemory(), IDKey: key})
		if !errors.Is(err, command.ErrIDKeyTooShort) || factum.CodeOf(err) != factum.CodeIllegalArgument {
			t.Fatalf("a %d-byte key: %v, want IllegalArgument and ErrIDKeyTooShort", len(key), err)
		}
		if len(key) > 0 && strings.Contains(err.Error(), string(key)) {
			t.Fatalf("the error shows the key: %v", err)
		}
	}
	key := bytes.Clone(testIDKey[:command.MinIDKeyLen])
	g := newKeyedGateway(t, key)
	want := g.CreateID(shop, "acme", "req-1")
	clear(key)
	if got := g.CreateID(shop, "acme", "req-1"); got != want {
		t.Fatalf("clearing the caller's key changed the ID: %s, then %s", want, got)
	}
}

// A create sent without an ID goes out with the keyed ID.
func TestKeyedCreateIDSent(t *testing.T) {
	def := aggregate.New[struct{}](shop.Context, shop.Aggregate,
		aggregate.Handle(func(context.Context, struct{}, openOrder) ([]any, error) { return nil, nil }, aggregate.Create()))
	reg, err := aggregate.NewRegistry(def)
	if err != nil {
		t.Fatal(err)
	}
	var sent recordBus
	g, err := command.NewGateway(command.GatewayConfig{Registry: reg, Bus: &sent, Waiters: command.NewWaiters(),
		Store: eventstore.NewMemory(), IDKey: testIDKey})
	if err != nil {
		t.Fatal(err)
	}
	cmd := factum.NewCommand(shop.WithID("").WithTenant("acme"), openOrder{})
	cmd.RequestID = "req-1"
	r, err := g.Send(context.Background(), cmd)
	if err != nil {
		t.Fatal(err)
	}
	want := g.CreateID(shop, "acme", "req-1")
	if r.AggregateID.ID != want || sent.last.AggregateID.ID != want || want == command.CreateID(shop, "acme", "req-1") {
		t.Fatalf("sent with ID %s (result %s), want the keyed %s", sent.last.AggregateID.ID, r.AggregateID.ID, want)
	}
}

type openOrder struct{}

// Concurrent derivations on one gateway each get their own inputs' ID.
func TestKeyedCreateIDConcurrent(t *testing.T) {
	g := newKeyedGateway(t, testIDKey)
	want := make([]string, 64)
	for i := range want {
		want[i] = g.CreateID(shop, "acme", fmt.Sprint("req-", i, strings.Repeat("x", i)))
	}
	var wg sync.WaitGroup
	errs := make(chan string, len(want))
	for w := 0; w < 8; w++ {
		wg.Go(func() {
			for n := 0; n < 200; n++ {
				i := (n*7 + w) % len(want)
				if got := g.CreateID(shop, "acme", fmt.Sprint("req-", i, strings.Repeat("x", i))); got != want[i] {
					errs <- fmt.Sprintf("request %d: %s, want %s", i, got, want[i])
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// recordBus keeps the last command sent.
type recordBus struct{ last factum.Command }

func (b *recordBus) Send(_ context.Context, c *factum.Command) error { b.last = *c; return nil }
