package compensation

// The execution aggregate's commands are internal; these names let the
// package's external tests send them, to check that the aggregate refuses
// what it must.
type (
	PrepareCompensation    = prepareCompensation
	ApplyExecutionFailed   = applyExecutionFailed
	RecordExecutionFailure = recordExecutionFailure
)
