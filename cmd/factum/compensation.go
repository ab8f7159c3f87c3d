package main

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"

	"github.com/factum-go/factum/httpapi"
	"github.com/spf13/cobra"
)

// newCompensationCmd is the operators' command over a running server's
// compensation routes.
func newCompensationCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "compensation",
		Short: "List, inspect and retry failed event-function executions",
		Long: `Operate on the executions of event functions that failed (projections,
handlers, sagas), over a running server's /compensation routes.`,
	}
	cmd.AddCommand(compListCmd(), compShowCmd(), compRetryCmd(), compRecoverableCmd(), compCountsCmd())
	return cmd
}

// operatorHeader names the operator for the audit trail.
func operatorHeader(operator string) http.Header {
	h := http.Header{}
	if operator != "" {
		h.Set(httpapi.HeaderOperator, operator)
	}
	return h
}

func compListCmd() *cobra.Command {
	var co clientOptions
	var status, processor string
	var needsOperator bool
	var page, size int
	cmd := &cobra.Command{
		Use:     "list",
		Short:   "List executions (filter by status, processor, needing an operator)",
		Example: "  factum compensation list --status FAILED\n  factum compensation list --needs-operator",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			q := url.Values{}
			set := func(k, v string) {
				if v != "" {
					q.Set(k, v)
				}
			}
			set("status", status)
			set("processor", processor)
			if needsOperator {
				q.Set("needsOperator", "true")
			}
			if page > 0 {
				q.Set("page", strconv.Itoa(page))
			}
			if size > 0 {
				q.Set("size", strconv.Itoa(size))
			}
			target := co.path("compensation", "executions")
			if len(q) > 0 {
				target += "?" + q.Encode()
			}
			return co.call(cmd.Context(), "GET", target, nil, nil, cmd.OutOrStdout())
		},
	}
	co.flags(cmd)
	f := cmd.Flags()
	f.StringVar(&status, "status", "", "FAILED, PREPARED or SUCCEEDED (comma list)")
	f.StringVar(&processor, "processor", "", "only executions of this processor")
	f.BoolVar(&needsOperator, "needs-operator", false, "only executions no automatic retry will touch")
	f.IntVar(&page, "page", 0, "page number, from 1")
	f.IntVar(&size, "size", 0, "page size")
	return cmd
}

func compShowCmd() *cobra.Command {
	return compGetCmd("show ID", "Show one execution with its history", cobra.ExactArgs(1),
		func(args []string) []string { return []string{"executions", args[0]} })
}

// compGetCmd is a sub-command that reads the compensation route that
// route makes of its arguments.
func compGetCmd(use, short string, nargs cobra.PositionalArgs, route func(args []string) []string) *cobra.Command {
	var co clientOptions
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Args:  nargs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return co.call(cmd.Context(), "GET", co.path(append([]string{"compensation"}, route(args)...)...), nil, nil, cmd.OutOrStdout())
		},
	}
	co.flags(cmd)
	return cmd
}

// executionActionCmd is a sub-command that acts on the execution its
// first argument names, for the operator --operator names: it sends method
// to the execution's action route with the body that body makes of the
// arguments.
func executionActionCmd(use, short, example string, nargs int, method, action string, body func(args []string) []byte) *cobra.Command {
	var co clientOptions
	var operator string
	cmd := &cobra.Command{
		Use:     use,
		Short:   short,
		Example: example,
		Args:    cobra.ExactArgs(nargs),
		RunE: func(cmd *cobra.Command, args []string) error {
			return co.call(cmd.Context(), method, co.path("compensation", "executions", args[0], action), operatorHeader(operator), body(args), cmd.OutOrStdout())
		},
	}
	co.flags(cmd)
	cmd.Flags().StringVar(&operator, "operator", "", "who acts, for the audit trail")
	return cmd
}

func compRetryCmd() *cobra.Command {
	return executionActionCmd("retry ID", "Retry an execution now, whatever its retry limit", "", 1,
		"POST", "retry", func([]string) []byte { return []byte{} })
}

func compRecoverableCmd() *cobra.Command {
	return executionActionCmd("recoverable ID RECOVERABLE|UNRECOVERABLE|UNKNOWN", "Mark whether retrying an execution can help",
		"  factum compensation recoverable 0193… UNRECOVERABLE --operator alice", 2,
		"PUT", "recoverable", func(args []string) []byte {
			body, _ := json.Marshal(map[string]string{"recoverable": args[1]})
			return body
		})
}

func compCountsCmd() *cobra.Command {
	return compGetCmd("counts", "Executions by status, and those waiting for an operator", cobra.NoArgs,
		func([]string) []string { return []string{"counts"} })
}
