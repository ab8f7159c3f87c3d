package main

import "github.com/spf13/cobra"

func newStateCmd() *cobra.Command {
	var (
		co       clientOptions
		snapshot bool
	)
	cmd := &cobra.Command{
		Use:   "state AGGREGATE ID [VERSION]",
		Short: "Print an aggregate's state document (current, at a version, or its snapshot)",
		Example: `  factum state cart cart-1
  factum state cart cart-1 2 --json
  factum state cart cart-1 --snapshot`,
		Args: cobra.RangeArgs(2, 3),
		RunE: func(cmd *cobra.Command, args []string) error {
			segs := []string{args[0], args[1], "state"}
			switch {
			case snapshot && len(args) == 3:
				return usageError{errorf("--snapshot takes no VERSION")}
			case snapshot:
				segs[2] = "snapshot"
			case len(args) == 3:
				segs = append(segs, args[2])
			}
			return co.call(cmd.Context(), "GET", co.path(segs...), nil, nil, cmd.OutOrStdout())
		},
	}
	co.flags(cmd)
	cmd.Flags().BoolVar(&snapshot, "snapshot", false, "the latest saved snapshot instead of the folded state")
	return cmd
}
