package main

import "github.com/spf13/cobra"

func newClusterCmd() *cobra.Command {
	var co clientOptions
	cmd := &cobra.Command{
		Use:   "cluster",
		Short: "List a clustered service's instances and the partitions each owns",
		Long: `Ask a clustered server (serve --nats-url) for the cluster as it sees it: the live
instances, the partitions each holds, the partitions nobody holds, and the
wait signals this instance routed. Any instance answers; with credentials it
needs an admin's.`,
		Example: `  factum cluster --url http://10.0.0.7:8080`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return co.call(cmd.Context(), "GET", co.base+clusterPath, nil, nil, cmd.OutOrStdout())
		},
	}
	co.flags(cmd)
	return cmd
}
