package servicetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// AnchorStream names the file-stored stream NATSURL keeps on the shared
// server. Tests never delete it.
//
// It exists because a NATS server (2.9 at least) removes an account's
// stream directory when the account's last file stream is deleted; a
// stream another test process creates at that moment fails with "could
// not create storage directory" (JetStream error 10077). Packages run in
// parallel, each creating and deleting its own streams, so without a
// stream that outlives them all that race is reachable.
const AnchorStream = "FACTUM_TEST_ANCHOR"

var anchors sync.Map // NATS URL → *anchorOnce

type anchorOnce struct {
	once sync.Once
	err  error
}

// anchor makes sure AnchorStream exists on the server at url, once per
// process and URL.
func anchor(url string) error {
	v, _ := anchors.LoadOrStore(url, &anchorOnce{})
	a := v.(*anchorOnce)
	a.once.Do(func() { a.err = createAnchor(url) })
	return a.err
}

// createAnchor creates AnchorStream, or finds it made, retrying for a few
// seconds: the creation itself can meet the race the stream prevents.
func createAnchor(url string) error {
	return withJetStream(url, func(ctx context.Context, js jetstream.JetStream) error {
		cfg := jetstream.StreamConfig{
			Name:     AnchorStream,
			Subjects: []string{"factum-test-anchor"},
			Storage:  jetstream.FileStorage,
			MaxMsgs:  1,
		}
		for {
			_, err := js.CreateStream(ctx, cfg)
			if err == nil || errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
				return nil
			}
			if errors.Is(err, jetstream.ErrJetStreamNotEnabled) || errors.Is(err, jetstream.ErrJetStreamNotEnabledForAccount) {
				return nil // no streams at all: nothing to keep the directory for
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("create the NATS anchor stream %s: %w", AnchorStream, err)
			case <-time.After(100 * time.Millisecond):
			}
		}
	})
}
