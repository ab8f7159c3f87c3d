package httpapi

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/aggregate"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/idempotency"
)

// The request headers of the command routes.
const (
	HeaderRequestID        = "Command-Request-Id"
	HeaderAggregateVersion = "Command-Aggregate-Version"
	HeaderWaitStage        = "Command-Wait-Stage"
	HeaderWaitContext      = "Command-Wait-Context"
	HeaderWaitProcessor    = "Command-Wait-Processor"
	HeaderWaitFunction     = "Command-Wait-Function"
	HeaderWaitTimeout      = "Command-Wait-Timeout"
)

// The response headers of the command routes, set on success and failure
// alike once the command is known.
const (
	HeaderCommandID   = "Command-Id"
	HeaderAggregateID = "Command-Aggregate-Id"
)

// postCommand serves POST /{aggregate}[/{id}]/{command}.
func (h *Handler) postCommand(w http.ResponseWriter, r *http.Request) {
	t, err := h.aggregateType(r)
	if err != nil {
		writeError(w, err)
		return
	}
	name := r.PathValue("command")
	info, ok := h.commands[t.Named()][name]
	if !ok {
		writeError(w, factum.NotFound(fmt.Sprintf("aggregate %s has no command %q", t.Named(), name)))
		return
	}
	body, err := h.readBody(w, r)
	if err != nil {
		writeError(w, err)
		return
	}
	h.send(w, r, t, info, body)
}

// deleteAggregate serves DELETE /{aggregate}/{id}: the built-in
// delete_aggregate command.
func (h *Handler) deleteAggregate(w http.ResponseWriter, r *http.Request) {
	h.builtin(w, r, aggregate.DeleteCommand)
}

// recoverAggregate serves PUT /{aggregate}/{id}/recover: the built-in
// recover_aggregate command.
func (h *Handler) recoverAggregate(w http.ResponseWriter, r *http.Request) {
	h.builtin(w, r, aggregate.RecoverCommand)
}

func (h *Handler) builtin(w http.ResponseWriter, r *http.Request, name string) {
	t, err := h.aggregateType(r)
	if err != nil {
		writeError(w, err)
		return
	}
	info, ok := h.commands[t.Named()][name]
	if !ok {
		writeError(w, factum.NotFound(fmt.Sprintf("aggregate %s has no command %q", t.Named(), name)))
		return
	}
	h.send(w, r, t, info, []byte("{}"))
}

// readBody reads the request body within the size limit; an empty body is
// the empty JSON object, for commands without fields.
func (h *Handler) readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.cfg.MaxBodyBytes))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return nil, factum.Errorf(factum.CodeBadRequest, "request body is larger than %d bytes: %w", h.cfg.MaxBodyBytes, errPayloadTooLarge)
		}
		return nil, factum.Errorf(factum.CodeBadRequest, "reading the request body: %w", err)
	}
	if len(strings.TrimSpace(string(b))) == 0 {
		return []byte("{}"), nil
	}
	if ok, why := validText(b); !ok {
		return nil, factum.NewError(factum.CodeBadRequest, "request body "+why)
	}
	return b, nil
}

// send decodes the body, builds the command from the path and headers, and
// answers with its result, or streams its signals.
func (h *Handler) send(w http.ResponseWriter, r *http.Request, t aggregate.Type, info commandInfo, body []byte) {
	start := time.Now()
	value, err := h.decodeCommand(info, body)
	if err != nil {
		writeError(w, err)
		return
	}
	id := factum.AggregateID{NamedAggregate: t.Named(), ID: r.PathValue("id"), Tenant: tenantOf(r)}
	cmd := factum.NewCommand(id, value)
	cmd.Name = info.spec.Name
	stampPrincipal(r, &cmd)
	plan, err := h.parseCommandHeaders(r, &cmd)
	if err != nil {
		writeError(w, err)
		return
	}
	if k, ok := idempotency.KeyFromContext(r.Context()); ok && r.Header.Get(HeaderRequestID) == "" {
		// Bound to the Idempotency-Key: every attempt with the key is one
		// request, which the event store appends once. A retry after a
		// timed-out wait finds the first attempt's outcome.
		cmd.RequestID = idempotency.RequestID(k)
	}
	if cmd.AggregateID.ID != "" {
		if err := cmd.AggregateID.Validate(); err != nil {
			writeError(w, err)
			return
		}
	} else if !info.spec.Create {
		writeError(w, factum.IllegalArgument(fmt.Sprintf("command %s needs an aggregate ID in the path (only create commands may omit it)", info.spec.Name)))
		return
	}
	if wantsEventStream(r) {
		h.stream(w, r, cmd, plan)
		return
	}
	var res command.Result
	if plan.Stage == factum.StageSent {
		res, err = h.rt.Gateway().Send(r.Context(), cmd)
	} else {
		res, err = h.rt.Gateway().SendAndWait(r.Context(), cmd, plan)
	}
	setResultHeaders(w, res)
	setServerTiming(w, start)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, res)
}

func setResultHeaders(w http.ResponseWriter, res command.Result) {
	if res.CommandID != "" {
		w.Header().Set(HeaderCommandID, res.CommandID)
	}
	if res.RequestID != "" {
		w.Header().Set(HeaderRequestID, res.RequestID)
	}
	if res.AggregateID.ID != "" {
		w.Header().Set(HeaderAggregateID, res.AggregateID.ID)
	}
	if res.AggregateVersion > 0 {
		w.Header().Set(HeaderAggregateVersion, strconv.Itoa(res.AggregateVersion))
	}
}

// parseCommandHeaders applies the Command-* headers to cmd and returns the
// wait plan. The wait timeout is capped here, so an excessive one is a 400
// before anything is sent.
func (h *Handler) parseCommandHeaders(r *http.Request, cmd *factum.Command) (command.WaitPlan, error) {
	plan := command.Wait(factum.StageProcessed)
	if v := r.Header.Get(HeaderRequestID); v != "" {
		if err := factum.ValidateID("request id", v); err != nil {
			return plan, err
		}
		cmd.RequestID = v
	}
	if v := r.Header.Get(HeaderAggregateVersion); v != "" {
		n, ok := parseNatural(v, eventstore.MaxVersion)
		if !ok {
			return plan, factum.IllegalArgument(fmt.Sprintf("%s %q: want a version number >= 0 in decimal digits", HeaderAggregateVersion, v))
		}
		cmd.ExpectedVersion = int(n)
	}
	if v := r.Header.Get(HeaderWaitStage); v != "" {
		s, err := factum.ParseCommandStage(v)
		if err != nil {
			return plan, err
		}
		plan.Stage = s
	}
	plan.Function = factum.Function{
		Context:   r.Header.Get(HeaderWaitContext),
		Processor: r.Header.Get(HeaderWaitProcessor),
		Name:      r.Header.Get(HeaderWaitFunction),
	}
	if !plan.Function.IsZero() && !plan.Stage.IsBranch() {
		return plan, factum.IllegalArgument(fmt.Sprintf("a wait function needs a branch stage (SNAPSHOT, PROJECTED, EVENT_HANDLED, SAGA_HANDLED), not %s", plan.Stage))
	}
	if v := r.Header.Get(HeaderWaitTimeout); v != "" {
		d, err := parseTimeout(v)
		if err != nil {
			return plan, err
		}
		if d > h.cfg.MaxWaitTimeout {
			return plan, factum.IllegalArgument(fmt.Sprintf("%s %s exceeds the maximum %s", HeaderWaitTimeout, d, h.cfg.MaxWaitTimeout))
		}
		plan.Timeout = d
	}
	return plan, nil
}

// parseTimeout reads a wait timeout: a Go duration ("1.5s", "500ms") or a
// whole number of milliseconds in canonical decimal form; signs and
// leading zeros are refused.
func parseTimeout(v string) (time.Duration, error) {
	var d time.Duration
	switch {
	case v == "":
		return 0, factum.IllegalArgument(fmt.Sprintf("%s is empty", HeaderWaitTimeout))
	case strings.Trim(v, "0123456789") == "":
		n, ok := parseNatural(v, int64(time.Duration(1<<62)/time.Millisecond))
		if !ok {
			return 0, factum.IllegalArgument(fmt.Sprintf("%s %q: want milliseconds in decimal digits, without leading zeros (or a duration such as 5s)", HeaderWaitTimeout, v))
		}
		d = time.Duration(n) * time.Millisecond
	case v[0] == '+' || v[0] == '-':
		return 0, factum.IllegalArgument(fmt.Sprintf("%s %q: want milliseconds or a duration such as 5s, without a sign", HeaderWaitTimeout, v))
	default:
		var err error
		if d, err = time.ParseDuration(v); err != nil {
			return 0, factum.IllegalArgument(fmt.Sprintf("%s %q: want milliseconds or a duration such as 5s", HeaderWaitTimeout, v))
		}
	}
	if d <= 0 {
		return 0, factum.IllegalArgument(fmt.Sprintf("%s %q: want a positive timeout", HeaderWaitTimeout, v))
	}
	return d, nil
}
