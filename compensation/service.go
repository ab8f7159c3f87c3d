package compensation

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/aggregate"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/snapshot"
)

// Item is one execution as lists show it: its identity, version and state.
type Item struct {
	// ID is the execution's aggregate ID, tenant included.
	ID factum.AggregateID `json:"id"`
	// Version is the execution's aggregate version.
	Version int `json:"version"`
	// Deleted marks an execution deleted with the built-in
	// delete_aggregate command (dismissed); lists leave such executions
	// out and the scheduler never sees them.
	Deleted bool `json:"deleted,omitempty"`
	// Execution is the state.
	Execution Execution `json:"execution"`
}

// Detail is one execution with its history.
type Detail struct {
	Item
	// History is the execution's own event streams, in version order:
	// every failure, retry and operator action, with its time and
	// operator (the stream's owner).
	History []factum.EventStream `json:"history"`
}

// Service is the operator surface over the executions of one
// compensation, for the HTTP API, the CLI and dashboards: list and page
// by status, function and aggregate; show one with its history; force a
// retry; change the retry spec, the recoverability or the function; count
// by status. Reads of one execution and all changes go through the event
// store, so they see the latest version; lists and counts query the
// snapshot store, which follows the log closely but not instantly. A
// Service is safe for concurrent use.
type Service struct {
	c      *Compensation
	tenant string
}

// Service returns the operator service over every tenant's executions.
func (c *Compensation) Service() *Service { return &Service{c: c} }

// ForTenant returns a copy of the service that sees only the executions
// of tenant (those of failed streams in that tenant; empty means
// factum.DefaultTenant): other tenants' executions are NotFound to it.
// Every tenant-facing route must use one.
func (s *Service) ForTenant(tenant string) (*Service, error) {
	if tenant == "" {
		tenant = factum.DefaultTenant
	}
	if err := factum.ValidateID("tenant", tenant); err != nil {
		return nil, err
	}
	return &Service{c: s.c, tenant: tenant}, nil
}

// Queries returns the snapshot query service over the executions, scoped
// to the service's tenant, for queries Filter does not express (the
// executions' state is under "state.", see Execution).
func (s *Service) Queries() (*snapshot.QueryService, error) {
	if s.tenant == "" {
		return s.c.queries, nil
	}
	return s.c.queries.ForTenant(s.tenant)
}

// Get returns the execution id with its history, read from the event
// store: NotFound when there is none (or it is another tenant's).
func (s *Service) Get(ctx context.Context, id string) (Detail, error) {
	b, err := s.c.runtime()
	if err != nil {
		return Detail{}, err
	}
	if err := factum.ValidateID("execution id", id); err != nil {
		return Detail{}, err
	}
	aid := s.c.named.WithID(id)
	streams, err := b.store.Load(ctx, aid, 1, eventstore.MaxVersion)
	if err != nil {
		return Detail{}, fmt.Errorf("compensation: load execution %s: %w", id, err)
	}
	if len(streams) == 0 || (s.tenant != "" && streams[0].AggregateID.TenantOrDefault() != s.tenant) {
		// The error names the service's own tenant (or none): an
		// execution of another tenant and a missing one look alike.
		return Detail{}, factum.NotFound(fmt.Sprintf("no execution %s", id)).With(aid.WithTenant(s.tenant), 0, "", "")
	}
	st := aggregate.State[Execution]{ID: aid}
	for i := range streams {
		if err := s.c.def.Source(b.codec, &st, &streams[i]); err != nil {
			return Detail{}, fmt.Errorf("compensation: execution %s: %w", id, err)
		}
	}
	return Detail{Item: Item{ID: st.ID, Version: st.Version, Deleted: st.Deleted, Execution: st.Value}, History: streams}, nil
}

// ForceRetry retries the execution now, whatever its limit, due time and
// recoverability, and returns the attempt. It is refused (IllegalState)
// while another retry holds the execution and once it SUCCEEDED, and
// fails with CommandExpectVersionConflict if the execution changed
// between reading it and preparing it.
func (s *Service) ForceRetry(ctx context.Context, id string) (Attempt, error) {
	d, err := s.Get(ctx, id)
	if err != nil {
		return Attempt{}, err
	}
	b, err := s.c.runtime()
	if err != nil {
		return Attempt{}, err
	}
	return s.c.retry(ctx, b, d.Item, true)
}

// ApplyRetrySpec replaces the execution's retry spec (taken literally:
// MaxRetries 0 stops automatic retries).
func (s *Service) ApplyRetrySpec(ctx context.Context, id string, spec RetrySpec) error {
	return s.send(ctx, id, applyExecutionRetrySpec{RetrySpec: spec})
}

// MarkRecoverable sets the execution's recoverability: RECOVERABLE or
// UNKNOWN lets the scheduler retry an UNRECOVERABLE one.
func (s *Service) MarkRecoverable(ctx context.Context, id string, r Recoverability) error {
	return s.send(ctx, id, markExecutionRecoverable{Recoverability: r})
}

// ChangeFunction points the execution at another event function.
func (s *Service) ChangeFunction(ctx context.Context, id string, fn factum.Function) error {
	return s.send(ctx, id, changeExecutionFunction{Function: fn})
}

// send sends an operator command to the execution, in its tenant.
func (s *Service) send(ctx context.Context, id string, body any) error {
	d, err := s.Get(ctx, id)
	if err != nil {
		return err
	}
	b, err := s.c.runtime()
	if err != nil {
		return err
	}
	cmd := factum.NewCommand(d.ID, body).WithOwner(OperatorFrom(ctx))
	_, err = b.gateway.SendAndWait(ctx, cmd, command.Wait(factum.StageProcessed))
	return err
}

// itemOf decodes a snapshot of an execution.
func itemOf(snap snapshot.Snapshot) (Item, error) {
	it := Item{ID: snap.AggregateID, Version: snap.Version, Deleted: snap.Deleted}
	if err := json.Unmarshal(snap.State, &it.Execution); err != nil {
		return Item{}, factum.Errorf(factum.CodeInternalServerError, "compensation: snapshot of %s does not decode: %w", snap.AggregateID, err)
	}
	return it, nil
}
