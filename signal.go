package factum

import "time"

// Signal reports that a command reached a stage at one function, or failed
// there. Signals travel from the processor and the event functions back to
// the gateway that waits for the command, keyed by CommandID, and the
// gateway hands them to the caller as they are (command.Result is this
// type): like every message they are plain, serialisable values, and their
// JSON is the command result of the HTTP API.
type Signal struct {
	// Stage is the stage reached.
	Stage CommandStage `json:"stage"`
	// CommandID is the command the signal is about.
	CommandID string `json:"commandId"`
	// RequestID is that command's request ID.
	RequestID string `json:"requestId"`
	// AggregateID is the command's aggregate (with the ID derived for a
	// create command sent without one).
	AggregateID AggregateID `json:"aggregateId"`
	// AggregateVersion is the aggregate version after the command's
	// stream, or 0 when nothing was appended (and before PROCESSED).
	AggregateVersion int `json:"aggregateVersion,omitempty"`
	// Function is the function that reached the stage (zero for SENT and
	// for a PROCESSED signal from the aggregate processor, which names
	// itself in Function.Processor).
	Function Function `json:"function,omitzero"`
	// EventNames lists, on a successful PROCESSED signal, the names of the
	// events appended, so a waiter can tell which functions consume them.
	EventNames []string `json:"eventNames,omitempty"`
	// Code is CodeOk on success.
	Code Code `json:"errorCode"`
	// Message describes a failure; it is for people.
	Message string `json:"errorMsg,omitempty"`
	// Bindings lists invalid command fields (CommandValidation).
	Bindings []BindingError `json:"bindingErrors,omitempty"`
	// Results carries values functions chose to return to the caller, such
	// as the IDs of the commands a saga sent.
	Results map[string]any `json:"result,omitempty"`
	// Duplicate marks the outcome of an earlier, appended attempt of the
	// same request, returned instead of running it again.
	Duplicate bool `json:"duplicate,omitempty"`
	// Note explains a signal the gateway made itself, such as for a branch
	// stage no function consumes.
	Note string `json:"note,omitempty"`
	// SignalTime is when the stage was reached.
	SignalTime time.Time `json:"signalTime"`
	// Origin is the instance whose gateway waits for the command (its
	// header's OriginHeader), for a transport to route the signal there;
	// empty when the command names none, which keeps the signal local. It
	// is routing, not outcome: it stays out of the JSON.
	Origin string `json:"-"`
	// OriginWait is the stage the wait at Origin is for (its header's
	// OriginWaitHeader, see OriginWait), for a transport to leave out the
	// signals that wait cannot use; 0 when the command names none, which
	// sends every signal. Like Origin it is routing, not outcome: it stays
	// out of the JSON.
	OriginWait CommandStage `json:"-"`
}

// Succeeded reports whether the signal reports success.
func (s Signal) Succeeded() bool { return s.Code == CodeOk || s.Code == "" }
