package main

import "github.com/spf13/cobra"

func newLookupCmd() *cobra.Command {
	var co clientOptions
	cmd := &cobra.Command{
		Use:   "lookup AGGREGATE ID REQUEST_ID",
		Short: "Was a request appended to the aggregate, and as what?",
		Long: `Ask the server whether a request was appended: the PROCESSED result of its
stream, or NotFound (exit 1). The way to settle a wait that timed out.`,
		Example: `  factum lookup cart cart-1 req-1`,
		Args:    cobra.ExactArgs(3),
		RunE: func(cmd *cobra.Command, args []string) error {
			return co.call(cmd.Context(), "GET", co.path(args[0], args[1], "request", args[2]), nil, nil, cmd.OutOrStdout())
		},
	}
	co.flags(cmd)
	return cmd
}
