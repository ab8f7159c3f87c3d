package main

import (
	"strconv"

	"github.com/spf13/cobra"
)

func newEventsCmd() *cobra.Command {
	var co clientOptions
	cmd := &cobra.Command{
		Use:   "events AGGREGATE ID [FROM [TO]]",
		Short: "Print an aggregate's event streams by version range",
		Example: `  factum events cart cart-1
  factum events cart cart-1 2 5`,
		Args: cobra.RangeArgs(2, 4),
		RunE: func(cmd *cobra.Command, args []string) error {
			from, to := "1", strconv.Itoa(1000)
			if len(args) > 2 {
				from = args[2]
				n, err := strconv.Atoi(from)
				if err == nil {
					to = strconv.Itoa(n + 999)
				}
			}
			if len(args) > 3 {
				to = args[3]
			}
			return co.call(cmd.Context(), "GET", co.path(args[0], args[1], "event", from, to), nil, nil, cmd.OutOrStdout())
		},
	}
	co.flags(cmd)
	return cmd
}
