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
	var co clientOptions
	cmd := &cobra.Command{
		Use:   "show ID",
		Short: "Show one execution with its history",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return co.call(cmd.Context(), "GET", co.path("compensation", "executions", args[0]), nil, nil, cmd.OutOrStdout())
		},
	}
	co.flags(cmd)
	return cmd
}

func compRetryCmd() *cobra.Command {
	var co clientOptions
	var operator string
	cmd := &cobra.Command{
		Use:   "retry ID",
		Short: "Retry an execution now, whatever its retry limit",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return co.call(cmd.Context(), "POST", co.path("compensation", "executions", args[0], "retry"), operatorHeader(operator), []byte{}, cmd.OutOrStdout())
		},
	}
	co.flags(cmd)
	cmd.Flags().StringVar(&operator, "operator", "", "who acts, for the audit trail")
	return cmd
}

func compRecoverableCmd() *cobra.Command {
	var co clientOptions
	var operator string
	cmd := &cobra.Command{
		Use:     "recoverable ID RECOVERABLE|UNRECOVERABLE|UNKNOWN",
		Short:   "Mark whether retrying an execution can help",
		Example: "  factum compensation recoverable 0193… UNRECOVERABLE --operator alice",
		Args:    cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			body, _ := json.Marshal(map[string]string{"recoverable": args[1]})
			return co.call(cmd.Context(), "PUT", co.path("compensation", "executions", args[0], "recoverable"), operatorHeader(operator), body, cmd.OutOrStdout())
		},
	}
	co.flags(cmd)
	cmd.Flags().StringVar(&operator, "operator", "", "who acts, for the audit trail")
	return cmd
}

func compCountsCmd() *cobra.Command {
	var co clientOptions
	cmd := &cobra.Command{
		Use:   "counts",
		Short: "Executions by status, and those waiting for an operator",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return co.call(cmd.Context(), "GET", co.path("compensation", "counts"), nil, nil, cmd.OutOrStdout())
		},
	}
	co.flags(cmd)
	return cmd
}
