package main

import (
	"net/url"
	"strings"

	"github.com/spf13/cobra"
)

// newProjectionCmd is the operators' command over a running server's
// projection routes.
func newProjectionCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "projection",
		Short: "List projections, show their builds, rebuild, reset and query them",
		Long: `Operate on a running server's durable projections (SQL read models) over its
/{context}/projections routes (admin role: a projection holds every tenant's
rows), and read them through their queries
(/{context}/projection/{name}/{query}, read role).

A rebuild is blue/green: a new build is filled from the log's start beside
the live one, which keeps serving, and replaces it in one transaction once
caught up. A reset empties the live read model and replays it (development).`,
	}
	cmd.AddCommand(projListCmd(),
		projOneCmd("status", "Show a projection's builds, checkpoints and lag", "GET", nil),
		projOneCmd("rebuild", "Start a blue/green rebuild of a projection", "POST", []byte{}, "rebuild"),
		projOneCmd("reset", "Empty a projection's live read model and replay the log into it", "POST", []byte{}, "reset"),
		projQueryCmd())
	return cmd
}

// projectionFlags are the flags every projection sub-command shares.
type projectionFlags struct {
	clientOptions
	context string
}

func (pf *projectionFlags) flags(cmd *cobra.Command) {
	pf.clientOptions.flags(cmd)
	cmd.Flags().StringVar(&pf.context, "context", boundedContext, "the projections' bounded context")
}

func projListCmd() *cobra.Command {
	var pf projectionFlags
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the projections with their live and next builds and lag",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return pf.call(cmd.Context(), "GET", pf.path(pf.context, "projections"), nil, nil, cmd.OutOrStdout())
		},
	}
	pf.flags(cmd)
	return cmd
}

// projOneCmd is the sub-command name NAME on one projection: it sends
// method, with body (nil for none), to the route of projection NAME
// followed by tail.
func projOneCmd(name, short, method string, body []byte, tail ...string) *cobra.Command {
	var pf projectionFlags
	cmd := &cobra.Command{
		Use:   name + " NAME",
		Short: short,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			route := append([]string{pf.context, "projections", args[0]}, tail...)
			return pf.call(cmd.Context(), method, pf.path(route...), nil, body, cmd.OutOrStdout())
		},
	}
	pf.flags(cmd)
	return cmd
}

func projQueryCmd() *cobra.Command {
	var pf projectionFlags
	cmd := &cobra.Command{
		Use:     "query NAME QUERY [PARAM=VALUE]...",
		Short:   "Run a projection's read query in the tenant (--tenant, or the key's)",
		Example: "  factum projection query order_summaries by_status status=PLACED limit=10",
		Args:    cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			q := url.Values{}
			for _, a := range args[2:] {
				k, v, ok := strings.Cut(a, "=")
				if !ok || k == "" {
					return usageError{errorf("parameter %q: want NAME=VALUE", a)}
				}
				q.Add(k, v)
			}
			target := pf.path(pf.context, "projection", args[0], args[1])
			if len(q) > 0 {
				target += "?" + q.Encode()
			}
			return pf.call(cmd.Context(), "GET", target, nil, nil, cmd.OutOrStdout())
		},
	}
	pf.flags(cmd)
	return cmd
}
