package factum

import "time"

// Signal reports that a command reached a stage at one function, or failed
// there. Signals travel from the processor and the event functions back to
// the gateway that waits for the command, keyed by CommandID; like every
// message they are plain, serialisable values.
type Signal struct {
	// CommandID is the command the signal is about.
	CommandID string `json:"commandId"`
	// RequestID is that command's request ID.
	RequestID string `json:"requestId,omitempty"`
	// Stage is the stage reached.
	Stage CommandStage `json:"stage"`
	// Function is the function that reached it (zero for SENT and for a
	// PROCESSED signal from the aggregate processor, which names itself in
	// Function.Processor).
	Function Function `json:"function,omitzero"`
	// AggregateID is the command's aggregate.
	AggregateID AggregateID `json:"aggregateId"`
	// Version is the aggregate version after the command's stream, or 0
	// when nothing was appended.
	Version int `json:"aggregateVersion,omitempty"`
	// EventNames lists, on a successful PROCESSED signal, the names of the
	// events appended, so a waiter can tell which functions consume them.
	EventNames []string `json:"eventNames,omitempty"`
	// Code is CodeOk on success.
	Code Code `json:"errorCode"`
	// Message describes a failure.
	Message string `json:"errorMsg,omitempty"`
	// Bindings lists invalid command fields (CommandValidation).
	Bindings []BindingError `json:"bindingErrors,omitempty"`
	// Result carries values a function chose to return to the caller, such
	// as the IDs of the commands a saga sent.
	Result map[string]any `json:"result,omitempty"`
	// Duplicate marks a PROCESSED signal answering a repeated request with
	// the outcome of its first, appended attempt.
	Duplicate bool `json:"duplicate,omitempty"`
	// Time is when the stage was reached.
	Time time.Time `json:"signalTime"`
}

// Succeeded reports whether the signal reports success.
func (s Signal) Succeeded() bool { return s.Code == CodeOk || s.Code == "" }
