package nats

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/nats-io/nats-server/v2/server"
	natsgo "github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// flakyJS is a JetStream whose KeyValue lookups answer from a script, one
// entry per call: an error, lost (no answer until the request's context
// ends), or the bucket.
type flakyJS struct {
	jetstream.JetStream
	script  []error
	calls   atomic.Int32
	created atomic.Int32
}

var errLost = errors.New("lost")

type bucket struct{ jetstream.KeyValue }

func (f *flakyJS) KeyValue(ctx context.Context, name string) (jetstream.KeyValue, error) {
	n := int(f.calls.Add(1)) - 1
	if n >= len(f.script) {
		return bucket{}, nil
	}
	switch err := f.script[n]; {
	case errors.Is(err, errLost):
		<-ctx.Done()
		return nil, fmt.Errorf("stream info: %w", ctx.Err())
	case err != nil:
		return nil, err
	}
	return bucket{}, nil
}

func (f *flakyJS) CreateKeyValue(ctx context.Context, cfg jetstream.KeyValueConfig) (jetstream.KeyValue, error) {
	f.created.Add(1)
	return bucket{}, nil
}

// A lookup of the lease bucket that a clustered JetStream never answers
// (its stream between leaders) is made again once its attempt's bound
// passes, within the caller's context; an answer refusing the request is
// returned at once. The old code made one request bounded only by the
// caller's context, so one lost request failed the whole start
// (TestAJetStreamNodeStopsUnderLoadAndNoCommandIsLost under CI's load).
func TestOpenLeaseBucketRetriesALostRequest(t *testing.T) {
	t.Parallel()
	refused := &jetstream.APIError{Code: 400, ErrorCode: jetstream.JSErrCodeBadRequest, Description: "bad request"}
	for _, tc := range []struct {
		name    string
		script  []error
		wait    time.Duration // the caller's context
		calls   int32         // lookups made
		created int32
		err     error // errors.Is the result's error; nil: success
		ends    bool  // the error comes once the caller's context ends
	}{
		{name: "lost once", script: []error{errLost}, wait: apiAttempt + 5*time.Second, calls: 2},
		{name: "no responders twice", script: []error{natsgo.ErrNoResponders, natsgo.ErrNoResponders}, wait: 5 * time.Second, calls: 3},
		{name: "cluster unavailable", script: []error{&jetstream.APIError{Code: 503, ErrorCode: 10008, Description: "JetStream system temporarily unavailable"}}, wait: 5 * time.Second, calls: 2},
		{name: "not found creates", script: []error{jetstream.ErrBucketNotFound}, wait: 5 * time.Second, calls: 1, created: 1},
		{name: "refused", script: []error{refused}, wait: 5 * time.Second, calls: 1, err: refused},
		{name: "insufficient resources", script: []error{&jetstream.APIError{Code: 503, ErrorCode: 10023, Description: "insufficient resources"}}, wait: 5 * time.Second, calls: 1, err: &jetstream.APIError{Code: 503, ErrorCode: 10023, Description: "insufficient resources"}},
		{name: "no responders for longer than their bound", script: slices.Repeat([]error{natsgo.ErrNoResponders}, 2*int(apiNoResponders/apiRetryWait)), wait: 4 * apiNoResponders, err: natsgo.ErrNoResponders},
		{name: "jetstream not enabled", script: []error{jetstream.ErrJetStreamNotEnabled}, wait: 5 * time.Second, calls: 1, err: jetstream.ErrJetStreamNotEnabled},
		{name: "caller's context ends", script: []error{natsgo.ErrNoResponders, natsgo.ErrNoResponders, natsgo.ErrNoResponders, natsgo.ErrNoResponders, natsgo.ErrNoResponders, natsgo.ErrNoResponders, natsgo.ErrNoResponders, natsgo.ErrNoResponders, natsgo.ErrNoResponders, natsgo.ErrNoResponders}, wait: 250 * time.Millisecond, err: natsgo.ErrNoResponders, ends: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			js := &flakyJS{script: tc.script}
			ctx, cancel := context.WithTimeout(context.Background(), tc.wait)
			defer cancel()
			kv, err := OpenLeaseBucket(ctx, js, "leases", 1)
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("err = %v, want %v", err, tc.err)
				}
				if !tc.ends && ctx.Err() != nil {
					t.Fatalf("err = %v only once the caller's context ended", err)
				}
				if tc.calls != 0 && js.calls.Load() != tc.calls {
					t.Fatalf("%d lookups, want %d", js.calls.Load(), tc.calls)
				}
				return
			}
			if err != nil || kv == nil {
				t.Fatalf("OpenLeaseBucket: %v", err)
			}
			if js.calls.Load() != tc.calls || js.created.Load() != tc.created {
				t.Fatalf("%d lookups and %d creations, want %d and %d", js.calls.Load(), js.created.Load(), tc.calls, tc.created)
			}
		})
	}
}

// A server without JetStream has no responder for the JetStream API, and
// never will: setting up against it fails within the bound of requests
// finding no responders, not once the caller's context ends (never, for
// a context without a deadline).
func TestSetUpFailsOnAServerWithoutJetStream(t *testing.T) {
	t.Parallel()
	s := runServer(t, &server.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true})
	_, js := dial(t, s.ClientURL())
	for _, tc := range []struct {
		name string
		set  func(context.Context) error
	}{
		{"lease bucket", func(ctx context.Context) error { _, err := OpenLeaseBucket(ctx, js, "leases", 1); return err }},
		{"log", func(ctx context.Context) error {
			_, err := EnsureLog(ctx, LogConfig{JetStream: js, Context: "shop", Stream: "LOG", SubjectPrefix: "log"})
			return err
		}},
		{"commands", func(ctx context.Context) error {
			cfg := BusConfig{JetStream: js, Stream: "CMDS", SubjectPrefix: "cmd", Replicas: 1, Duplicates: DefaultCommandDuplicates, MaxPending: DefaultMaxPending}
			_, err := ensureCommands(ctx, &cfg)
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 6*apiNoResponders)
			defer cancel()
			err := tc.set(ctx)
			if !errors.Is(err, natsgo.ErrNoResponders) {
				t.Fatalf("err = %v, want %v", err, natsgo.ErrNoResponders)
			}
			if ctx.Err() != nil {
				t.Fatal("it failed only once the caller's context ended")
			}
		})
	}
}

// The command stream found existing is used only if it is a work queue:
// one made otherwise (by hand, or by another program under the same name)
// is refused, whatever the attempt that found it.
func TestEnsureCommandsRefusesAStreamThatIsNotAWorkQueue(t *testing.T) {
	t.Parallel()
	_, js := dial(t, startServer(t).ClientURL())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "CMDS", Subjects: []string{"cmd.>"}}); err != nil {
		t.Fatal(err)
	}
	cfg := BusConfig{JetStream: js, Stream: "CMDS", SubjectPrefix: "cmd", Replicas: 1, Duplicates: DefaultCommandDuplicates, MaxPending: DefaultMaxPending}
	if _, err := ensureCommands(ctx, &cfg); !errors.Is(err, factum.ErrIllegalArgument) {
		t.Fatalf("err = %v, want %v", err, factum.ErrIllegalArgument)
	}
	cfg.Stream, cfg.SubjectPrefix = "CMDS2", "cmd2"
	s, err := ensureCommands(ctx, &cfg)
	if err != nil {
		t.Fatal(err)
	}
	if r := s.CachedInfo().Config.Retention; r != jetstream.WorkQueuePolicy {
		t.Fatalf("the stream made has retention %v, want a work queue", r)
	}
	if _, err := ensureCommands(ctx, &cfg); err != nil {
		t.Fatalf("the work queue made: %v", err)
	}
}
