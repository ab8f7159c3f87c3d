package main

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/factum-go/factum/httpapi"
	"github.com/spf13/cobra"
)

func newSendCmd() *cobra.Command {
	var (
		co                clientOptions
		requestID, stage  string
		function, waitFor string
		version           int
		stream            bool
	)
	cmd := &cobra.Command{
		Use:   "send AGGREGATE ID COMMAND [JSON]",
		Short: "Send a command to a running server and wait for a stage",
		Long: `Send a command to a running server and print its result. ID "-" sends a create
command without an aggregate ID (the server derives it from the request ID).`,
		Example: `  factum send cart cart-1 add_item '{"sku":"sku-1","qty":2}' --request-id req-1
  factum send cart cart-1 remove_item '{"sku":"sku-1"}' --version 1 --wait SNAPSHOT
  factum send cart cart-1 clear_cart --stream
  factum send cart cart-1 add_item '{"sku":"sku-2","qty":1}' --json`,
		Args: cobra.RangeArgs(3, 4),
		RunE: func(cmd *cobra.Command, args []string) error {
			segs := []string{args[0], args[1], args[2]}
			if args[1] == "-" {
				segs = []string{args[0], args[2]}
			}
			body := []byte("{}")
			if len(args) == 4 {
				body = []byte(args[3])
			}
			h := http.Header{}
			if requestID != "" {
				h.Set(httpapi.HeaderRequestID, requestID)
			}
			if version > 0 {
				h.Set(httpapi.HeaderAggregateVersion, strconv.Itoa(version))
			}
			if stage != "" {
				h.Set(httpapi.HeaderWaitStage, stage)
			}
			if function != "" {
				parts := strings.SplitN(function, "/", 3)
				for len(parts) < 3 {
					parts = append([]string{""}, parts...)
				}
				setIf(h, httpapi.HeaderWaitContext, parts[0])
				setIf(h, httpapi.HeaderWaitProcessor, parts[1])
				setIf(h, httpapi.HeaderWaitFunction, parts[2])
			}
			if waitFor != "" {
				h.Set(httpapi.HeaderWaitTimeout, waitFor)
			}
			if stream {
				h.Set("Accept", "text/event-stream")
			}
			return co.call(cmd.Context(), "POST", co.path(segs...), h, body, cmd.OutOrStdout())
		},
	}
	co.flags(cmd)
	f := cmd.Flags()
	f.StringVar(&requestID, "request-id", "", "the request ID (Command-Request-Id); reuse it to retry safely")
	f.IntVar(&version, "version", 0, "the version the aggregate must be at (Command-Aggregate-Version)")
	f.StringVar(&stage, "wait", "", "the stage to wait for: SENT, PROCESSED (default), SNAPSHOT, PROJECTED, EVENT_HANDLED, SAGA_HANDLED")
	f.StringVar(&function, "wait-function", "", "restrict a branch-stage wait: [[context/]processor/]name")
	f.StringVar(&waitFor, "wait-timeout", "", "how long the server waits for the stage, such as 5s (Command-Wait-Timeout); keep it below --timeout")
	f.BoolVar(&stream, "stream", false, "stream every stage as Server-Sent Events")
	return cmd
}

func setIf(h http.Header, k, v string) {
	if v != "" {
		h.Set(k, v)
	}
}
