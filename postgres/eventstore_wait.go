package postgres

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/internal/sqlstore"
	"github.com/jackc/pgx/v5"
)

// WaitLog implements eventstore.LogWaiter. It returns nil when the log
// holds a readable stream after position after (so ReadLog will return
// it), when woken is closed (an append through this store), or ctx's
// error. It wakes on a NOTIFY from another process's store, and otherwise
// looks every PollInterval. While streams are committed but not yet readable (an older
// transaction is still running) it looks more often, as no notification
// announces the end of that transaction.
func (s *esLog) WaitLog(ctx context.Context, after factum.Position, woken <-chan struct{}) error {
	pending := 2 * time.Millisecond
	for {
		notified := s.listener.next()
		var ready, committed bool
		err := s.pool.QueryRow(ctx, s.q.logState, after.Tx, sqlstore.SeqArg(after.Seq)).Scan(&ready)
		committed = err == nil
		if errors.Is(err, pgx.ErrNoRows) {
			err = nil
		}
		if err != nil {
			return sqlstore.LogError(ctx, &dialect, s.context, err)
		}
		if ready {
			return nil
		}
		wait := s.opts.PollInterval
		if committed {
			wait = min(pending, wait)
			pending = min(2*pending, s.opts.PollInterval)
		}
		if err := sqlstore.Pause(ctx, wait, woken, notified); err != nil {
			return err
		}
		select {
		case <-woken:
			return nil // an append through the store: the caller reads on
		default:
		}
	}
}

// esListener LISTENs on the store's channel on a connection of its own,
// started by the first WaitLog, and broadcasts each notification to the
// waiters. When the connection fails it reconnects with backoff; waiters
// poll meanwhile, and are woken on reconnection in case they missed a
// notification.
type esListener struct {
	s     *EventStore
	start sync.Once
	done  chan struct{} // closed when run has returned

	notified sqlstore.Broadcast
}

func (l *esListener) init(s *EventStore) {
	l.s = s
	l.done = make(chan struct{})
}

// next returns a channel closed on the next notification.
func (l *esListener) next() <-chan struct{} {
	if l.s.opts.DisableNotify {
		return nil
	}
	l.start.Do(func() { go l.run() })
	return l.notified.Wait()
}

// stop waits for the listener to end (the store's lifetime has ended).
func (l *esListener) stop() {
	l.start.Do(func() { close(l.done) }) // never started
	<-l.done
}

func (l *esListener) run() {
	defer close(l.done)
	life := l.s.life
	cfg := l.s.pool.Config().ConnConfig
	listen := "LISTEN " + pgx.Identifier{l.s.channel}.Sanitize()
	backoff := 100 * time.Millisecond
	for life.Err() == nil {
		conn, err := pgx.ConnectConfig(life, cfg.Copy())
		if err == nil {
			if _, err = conn.Exec(life, listen); err == nil {
				backoff = 100 * time.Millisecond
				l.notified.Wake()
				for {
					if _, err = conn.WaitForNotification(life); err != nil {
						break
					}
					l.notified.Wake()
				}
			}
			cctx, cancel := context.WithTimeout(context.Background(), time.Second)
			conn.Close(cctx)
			cancel()
		}
		t := time.NewTimer(backoff)
		select {
		case <-t.C:
		case <-life.Done():
			t.Stop()
		}
		backoff = min(2*backoff, l.s.opts.PollInterval)
	}
}
