package nats

import (
	"context"
	"errors"
	"time"

	natsgo "github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// apiAttempt bounds one JetStream API request made while setting up (a
// bucket's or a stream's lookup or creation). A clustered JetStream drops
// a request it cannot answer yet, a stream whose leader is being elected
// for one: nothing replies, and a request bounded only by the caller's
// context would wait all of it for an answer that never comes.
const apiAttempt = 5 * time.Second

// apiRetryWait is the pause between two attempts.
const apiRetryWait = 100 * time.Millisecond

// retryLost runs op, each attempt bounded by attempt, until it succeeds,
// fails for a reason other than a lost request, or ctx ends. op must be
// safe to repeat: the set-up requests it serves look up or create by
// name, and a creation whose answer was lost finds its stream existing
// on the next attempt.
func retryLost[T any](ctx context.Context, attempt time.Duration, op func(context.Context) (T, error)) (T, error) {
	for {
		actx, cancel := context.WithTimeout(ctx, attempt)
		v, err := op(actx)
		cancel()
		if err == nil || ctx.Err() != nil || !lostRequest(err) {
			return v, err
		}
		select {
		case <-ctx.Done():
			return v, err
		case <-time.After(apiRetryWait):
		}
	}
}

// lostRequest reports whether err says a JetStream API request got no
// answer, as opposed to an answer refusing it: the attempt's deadline
// passed, no server subscribed to the API subject (JetStream starting,
// a node between leaders), or the server answered that the cluster is
// not available for now. JetStream not enabled at all is an answer.
func lostRequest(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, natsgo.ErrTimeout) || errors.Is(err, natsgo.ErrNoResponders) {
		return true
	}
	var api *jetstream.APIError
	if errors.As(err, &api) {
		switch api.ErrorCode {
		case jetstream.JSErrCodeJetStreamNotEnabled, jetstream.JSErrCodeJetStreamNotEnabledForAccount:
			return false
		}
		return api.Code == 503
	}
	return false
}
