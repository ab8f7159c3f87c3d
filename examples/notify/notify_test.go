package notify_test

import (
	"context"
	"errors"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/examples/notify"
)

func TestRelaySend(t *testing.T) {
	tests := []struct {
		name  string
		to    string
		codes []factum.Code // one per delivery of the same mail
	}{
		{"plain domain delivers at once", "ann@shop.example", []factum.Code{factum.CodeOk}},
		{"invalid domain is refused for good", "bob@mail.invalid", []factum.Code{factum.CodeIllegalArgument, factum.CodeIllegalArgument, factum.CodeIllegalArgument, factum.CodeIllegalArgument}},
		{"no domain is refused", "carol", []factum.Code{factum.CodeIllegalArgument}},
		{"greylisting defers the first deliveries", "dan@greylist.example",
			[]factum.Code{factum.CodeTooManyRequests, factum.CodeTooManyRequests, factum.CodeTooManyRequests, factum.CodeOk, factum.CodeOk}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := notify.NewRelay(notify.RelayConfig{})
			if err != nil {
				t.Fatal(err)
			}
			for i, want := range tt.codes {
				err := r.Send(context.Background(), notify.Mail{ID: "e-1", To: tt.to})
				got := factum.CodeOk
				if err != nil {
					got = factum.CodeOf(err)
				}
				if got != want {
					t.Fatalf("delivery %d: %v (%s), want %s", i+1, err, got, want)
				}
			}
			sent := r.Sent()
			if last := tt.codes[len(tt.codes)-1]; last == factum.CodeOk && len(sent) != 1 {
				t.Fatalf("sent %d mails, want exactly 1 however often it is delivered", len(sent))
			} else if last != factum.CodeOk && len(sent) != 0 {
				t.Fatalf("sent %v for a refused mail", sent)
			}
		})
	}
}

func TestRelayConfigAndContext(t *testing.T) {
	if _, err := notify.NewRelay(notify.RelayConfig{Deferrals: -1}); factum.CodeOf(err) != factum.CodeIllegalArgument {
		t.Fatalf("negative deferrals: %v", err)
	}
	if _, err := notify.NewRelay(notify.RelayConfig{Greylisting: []string{" "}}); factum.CodeOf(err) != factum.CodeIllegalArgument {
		t.Fatalf("blank domain: %v", err)
	}
	r, err := notify.NewRelay(notify.RelayConfig{Greylisting: []string{"Slow.Example"}, Deferrals: 1})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := r.Send(ctx, notify.Mail{ID: "e", To: "a@slow.example"}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled send: %v", err)
	}
	if err := r.Send(context.Background(), notify.Mail{ID: "e", To: "A@SLOW.example"}); factum.CodeOf(err) != factum.CodeTooManyRequests {
		t.Fatalf("first delivery to a configured greylisting domain: %v", err)
	}
	if err := r.Send(context.Background(), notify.Mail{ID: "e", To: "a@slow.example"}); err != nil {
		t.Fatalf("second delivery: %v", err)
	}
	if _, err := notify.Welcome(nil, factum.NamedAggregate{}); factum.CodeOf(err) != factum.CodeIllegalArgument {
		t.Fatalf("nil relay: %v", err)
	}
}
