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

// apiNoResponders bounds how long retryLost makes again a request that
// found no server subscribed to the JetStream API. A JetStream starting,
// or a node between leaders, subscribes within seconds; a server without
// JetStream never does, and answers every request so, at once: past this
// bound the request fails as it would have without retrying.
const apiNoResponders = 5 * time.Second

// jsErrCodeClusterNotAvailable is the server's answer to a request it
// cannot serve for now: the meta leader or the stream's leader is being
// elected (JSClusterNotAvailErr, "JetStream system temporarily
// unavailable").
const jsErrCodeClusterNotAvailable jetstream.ErrorCode = 10008

// retryLost runs op, each attempt bounded by apiAttempt, until it succeeds,
// fails for a reason other than a lost request, or ctx ends; a request
// finding no responders is made again for apiNoResponders at most. op
// must be safe to repeat: the set-up requests it serves look up or
// create by name, and a creation whose answer was lost finds its stream
// existing on the next attempt.
func retryLost[T any](ctx context.Context, op func(context.Context) (T, error)) (T, error) {
	var noResponders time.Time // when requests began finding no responders
	for {
		actx, cancel := context.WithTimeout(ctx, apiAttempt)
		v, err := op(actx)
		cancel()
		if err == nil || ctx.Err() != nil || !lostRequest(err) {
			return v, err
		}
		if errors.Is(err, natsgo.ErrNoResponders) {
			if noResponders.IsZero() {
				noResponders = time.Now()
			} else if time.Since(noResponders) >= apiNoResponders {
				return v, err
			}
		} else {
			noResponders = time.Time{}
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
// not available for now. Any other answer, a 503 among them (JetStream
// not enabled, insufficient resources, clustering required), is a
// refusal that asking again does not change.
func lostRequest(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, natsgo.ErrTimeout) || errors.Is(err, natsgo.ErrNoResponders) {
		return true
	}
	var api *jetstream.APIError
	return errors.As(err, &api) && api.ErrorCode == jsErrCodeClusterNotAvailable
}
