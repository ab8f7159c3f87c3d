package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	"github.com/factum-go/factum"
)

// usageError is a mistake in the command line: run prints it with the
// command's usage and exits 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }

// run executes the command line args and returns the exit code: 0, 1 for
// a failure, 2 for a usage mistake (printed with the usage).
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	root := newRoot(stdout, stderr)
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return 0
	}
	fmt.Fprintln(stderr, "factum:", errorMessage(err))
	var ue usageError
	if errors.As(err, &ue) || strings.HasPrefix(err.Error(), "unknown command") {
		if cmd == nil {
			cmd = root
		}
		fmt.Fprintln(stderr)
		fmt.Fprint(stderr, cmd.UsageString())
		return 2
	}
	return 1
}

// errorPrefix begins the message of factum's own errors (*factum.Error,
// the Err* sentinels, factum.ErrClosed).
const errorPrefix = "factum: "

// errorMessage is err's message as run prints it, after its one
// "factum:". A factum error's text begins with errorPrefix and its code
// (or "closed", factum.ErrClosed), wherever it sits: first, wrapped or
// formatted after another message's ": ", or on a line of its own in a
// joined error; the prefix is dropped there, so the command names itself
// once. A "factum: " followed by anything else is another text's (a
// server's message, say) and is printed as it is.
func errorMessage(err error) string {
	msg := err.Error()
	var b strings.Builder
	for start := true; ; start = false {
		i := nextPrefix(msg, start)
		if i < 0 {
			b.WriteString(msg)
			return b.String()
		}
		b.WriteString(msg[:i])
		msg = msg[i+len(errorPrefix):]
	}
}

// nextPrefix returns the index in msg of the next errorPrefix that begins
// a factum error's text: at the start of msg (when start), after ": " or
// after a line break; -1 when there is none.
func nextPrefix(msg string, start bool) int {
	if start && beginsFactumError(msg) {
		return 0
	}
	for i := 1; i < len(msg); i++ {
		if (msg[i-1] == '\n' || strings.HasSuffix(msg[:i], ": ")) && beginsFactumError(msg[i:]) {
			return i
		}
	}
	return -1
}

// beginsFactumError reports whether s begins with the text of a factum
// error: errorPrefix, then a code or "closed", then the end, ":", " [" or
// a line break.
func beginsFactumError(s string) bool {
	rest, ok := strings.CutPrefix(s, errorPrefix)
	if !ok {
		return false
	}
	for _, word := range errorWords {
		if after, ok := strings.CutPrefix(rest, word); ok &&
			(after == "" || after[0] == ':' || after[0] == '\n' || strings.HasPrefix(after, " [")) {
			return true
		}
	}
	return false
}

// errorWords are what follows errorPrefix in a factum error's text:
// "closed" (factum.ErrClosed) or the text of one of factum's error codes.
var errorWords = func() []string {
	words := []string{"closed"}
	for _, c := range factum.Codes {
		words = append(words, string(c))
	}
	return words
}()

func newRoot(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:           "factum",
		Short:         "factum: CQRS and event sourcing for Go — the example service and its tools",
		Version:       version(),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetVersionTemplate("factum {{.Version}}\n")
	root.AddCommand(newServeCmd(), newSendCmd(), newStateCmd(), newEventsCmd(), newLookupCmd(), newQueryCmd(), newBenchCmd(), newCompensationCmd(), newClusterCmd(), newProjectionCmd())
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	markUsage(root)
	return root
}

// markUsage makes every command's argument-count errors usage errors.
func markUsage(c *cobra.Command) {
	if args := c.Args; args != nil {
		c.Args = func(cmd *cobra.Command, a []string) error {
			if err := args(cmd, a); err != nil {
				return usageError{err}
			}
			return nil
		}
	}
	for _, sub := range c.Commands() {
		markUsage(sub)
	}
}

// version describes the binary from its build information: the module
// version, or the VCS revision and time for a build from a checkout.
func version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "(unknown version)"
	}
	v := info.Main.Version
	settings := map[string]string{}
	for _, s := range info.Settings {
		settings[s.Key] = s.Value
	}
	if rev := settings["vcs.revision"]; rev != "" {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		v += " (" + rev
		if t := settings["vcs.time"]; t != "" {
			v += " " + t
		}
		if settings["vcs.modified"] == "true" {
			v += ", modified"
		}
		v += ")"
	}
	return v + " " + info.GoVersion
}

// envOr returns the environment variable's value, or def when unset.
func envOr(name, def string) string {
	if v, ok := os.LookupEnv(name); ok && v != "" {
		return v
	}
	return def
}
