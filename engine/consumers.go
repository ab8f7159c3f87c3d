package engine

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/factum-go/factum/event"
)

// buildConsumers turns the configured processors and sagas into consumer
// groups whose signals reach the runtime's waiters.
func (r *Engine) buildConsumers(cfg Config) error {
	procs := append([]*event.Processor(nil), cfg.Processors...)
	for _, s := range cfg.Sagas {
		p, err := s.Processor(r.codec, internalSender{r.gateway})
		if err != nil {
			return err
		}
		procs = append(procs, p)
	}
	checkpoints := cfg.Checkpoints
	if checkpoints == nil {
		checkpoints = event.NewMemoryCheckpoints()
	}
	r.checkpoints = checkpoints
	for _, p := range procs {
		tune := r.tune[p]
		p, err := p.Bind(r.codec)
		if err != nil {
			return err
		}
		if err := r.functions.Add(p); err != nil {
			return err
		}
		ec := cfg.Events
		ec.Log, ec.Checkpoints, ec.Failures, ec.Notify = r.store, checkpoints, cfg.Failures, r.sink.Signal
		ec.Middleware = append(cfg.EventMiddleware[:len(cfg.EventMiddleware):len(cfg.EventMiddleware)], ec.Middleware...)
		if tune != nil {
			ec = tune(p, ec)
		}
		c, err := event.NewConsumer(p, ec)
		if err != nil {
			return fmt.Errorf("engine: consumer %s: %w", p.Name(), err)
		}
		r.consumers = append(r.consumers, c)
	}
	return nil
}

// consumerGroup runs the consumers and stops them after draining.
type consumerGroup struct {
	cancel    context.CancelFunc
	wg        sync.WaitGroup
	consumers []*event.Consumer
	done      []atomic.Bool // done[i]: consumers[i].Run returned
}

func (g *consumerGroup) start(ctx context.Context, consumers []*event.Consumer) {
	ctx, g.cancel = context.WithCancel(context.WithoutCancel(ctx))
	g.consumers = consumers
	g.done = make([]atomic.Bool, len(consumers))
	for i, c := range consumers {
		g.wg.Go(func() {
			defer g.done[i].Store(true)
			_ = c.Run(ctx)
		})
	}
}

// exited reports whether the i-th consumer's Run has returned (or never
// started).
func (g *consumerGroup) exited(i int) bool { return i >= len(g.done) || g.done[i].Load() }

// stop lets each consumer handle the log to its end, then returns; at ctx's
// end it cancels them and returns ctx's error.
func (g *consumerGroup) stop(ctx context.Context) error {
	if g.cancel == nil {
		return nil
	}
	for _, c := range g.consumers {
		c.Drain()
	}
	done := make(chan struct{})
	go func() { g.wg.Wait(); close(done) }()
	select {
	case <-done:
		g.cancel()
		return nil
	case <-ctx.Done():
		g.cancel()
		<-done
		return fmt.Errorf("runtime: consumers stopped before draining: %w", ctx.Err())
	}
}
