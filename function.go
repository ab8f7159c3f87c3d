package factum

// Function identifies an event function (a projection, an event handler, a
// saga, the snapshotter) stably across restarts: consumers keep checkpoints,
// failures and wait signals under it.
type Function struct {
	// Context is the bounded context the function belongs to.
	Context string `json:"context"`
	// Processor is the component holding the function, such as
	// "cart_summary_projector".
	Processor string `json:"processor"`
	// Name is the function's name, such as "on_cart_item_added".
	Name string `json:"name"`
}

// String formats the function as "context/processor/name".
func (f Function) String() string { return f.Context + "/" + f.Processor + "/" + f.Name }

// IsZero reports whether f is the zero Function.
func (f Function) IsZero() bool { return f == Function{} }

// Validate reports an IllegalArgument error if any part is not a valid name.
func (f Function) Validate() error {
	if err := ValidateName("function context", f.Context); err != nil {
		return err
	}
	if err := ValidateName("function processor", f.Processor); err != nil {
		return err
	}
	return ValidateName("function", f.Name)
}

// Matches reports whether f is selected by target, where a blank part of
// target matches any value.
func (f Function) Matches(target Function) bool {
	return (target.Context == "" || target.Context == f.Context) &&
		(target.Processor == "" || target.Processor == f.Processor) &&
		(target.Name == "" || target.Name == f.Name)
}
