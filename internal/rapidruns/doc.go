// Package rapidruns bounds the number of runs of a rapid property test on
// backends where one run costs a fresh database, unless the command line
// (-rapid.checks) or the environment (RAPID_CHECKS) asks for a number:
// longer runs are a flag away, CI stays within its budget.
package rapidruns
