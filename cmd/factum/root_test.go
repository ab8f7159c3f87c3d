package main

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/httpapi"
)

// A command's error is printed with one "factum:", however the
// *factum.Error that fails it is returned: alone, or joined with the
// errors of the cleanup after it.
func TestCLIErrorPrefixOnce(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"nats without postgres", []string{"serve", "--memory", "--nats-url", "nats://127.0.0.1:1"}, "factum: IllegalArgument: --nats-url runs the service clustered"},
		{"pprof off loopback", []string{"serve", "--memory", "--addr", "127.0.0.1:0", "--pprof", "0.0.0.0:6060"}, `factum: IllegalArgument: --pprof "0.0.0.0:6060" is not a loopback address`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := cliRun(tc.args...)
			if code != 1 || !strings.HasPrefix(stderr, tc.want) || strings.Count(stderr, "factum:") != 1 {
				t.Fatalf("%v: exit %d, stderr %q; want 1 and one %q", tc.args, code, stderr, tc.want)
			}
		})
	}
}

func TestErrorMessage(t *testing.T) {
	bad := factum.IllegalArgument("--pprof is not a loopback address")
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"plain", errors.New("no factum server at http://127.0.0.1:1"), "no factum server at http://127.0.0.1:1"},
		{"factum error", bad, "IllegalArgument: --pprof is not a loopback address"},
		{"wrapped", fmt.Errorf("serve: %w", bad), "serve: IllegalArgument: --pprof is not a loopback address"},
		{"formatted", fmt.Errorf("serve: %v", bad), "serve: IllegalArgument: --pprof is not a loopback address"},
		{"joined", errors.Join(bad, nil, factum.ErrClosed), "IllegalArgument: --pprof is not a loopback address\nclosed"},
		{"usage", usageError{fmt.Errorf("flag: %w", bad)}, "flag: IllegalArgument: --pprof is not a loopback address"},
		{"nested", &factum.Error{Code: factum.CodeInternalServerError, Message: "start", Err: bad},
			"InternalServerError: start: IllegalArgument: --pprof is not a loopback address"},
		{"sentinel", fmt.Errorf("open: %w", factum.ErrNotFound), "open: NotFound"},
		{"closed", fmt.Errorf("send: %w", factum.ErrClosed), "send: closed"},
		// A server's message is its own text: a "factum: " in it that
		// begins no factum error is printed as sent.
		{"message quoting factum", &httpError{status: 409, body: httpapi.ErrorBody{Code: factum.CodeIllegalState, Message: `title "notes: factum: the framework" is taken`}},
			`HTTP 409 IllegalState: title "notes: factum: the framework" is taken`},
		{"message line quoting factum", &httpError{status: 400, body: httpapi.ErrorBody{Code: factum.CodeBadRequest, Message: "line 2:\nfactum: is no field"}},
			"HTTP 400 BadRequest: line 2:\nfactum: is no field"},
		{"plain error quoting factum", errors.New("factum: a user's text"), "factum: a user's text"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := errorMessage(tc.err); got != tc.want {
				t.Fatalf("errorMessage(%q) = %q, want %q", tc.err, got, tc.want)
			}
		})
	}
}
