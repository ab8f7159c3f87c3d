package main

import (
	"github.com/spf13/cobra"
)

func newQueryCmd() *cobra.Command {
	var (
		co        clientOptions
		stateOnly bool
	)
	cmd := &cobra.Command{
		Use:   "query AGGREGATE single|list|paged|count [JSON]",
		Short: "Query an aggregate type's snapshots",
		Long: `Query the snapshots of an aggregate type on a running server. JSON is the query
in the form of package query: a query for single and list, a paged query for
paged, a condition for count (default: everything, within the guards).`,
		Example: `  factum query cart count
  factum query cart list '{"condition":{"operator":"AGGREGATE_IDS","value":["cart-1"]}}' --state
  factum query cart paged '{"pagination":{"index":1,"size":10}}'`,
		Args: cobra.RangeArgs(2, 3),
		RunE: func(cmd *cobra.Command, args []string) error {
			segs := []string{args[0], "snapshot", args[1]}
			if stateOnly {
				segs = append(segs, "state")
			}
			body := []byte("{}")
			if len(args) == 3 {
				body = []byte(args[2])
			}
			return co.call(cmd.Context(), "POST", co.path(segs...), nil, body, cmd.OutOrStdout())
		},
	}
	co.flags(cmd)
	cmd.Flags().BoolVar(&stateOnly, "state", false, "return the states only")
	return cmd
}
