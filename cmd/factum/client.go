package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/factum-go/factum/auth"
	"github.com/factum-go/factum/httpapi"
	"github.com/spf13/cobra"
)

// defaultURL is where the client commands look for a server.
const defaultURL = "http://127.0.0.1:8080"

// clientOptions are the flags of the commands that talk to a server.
type clientOptions struct {
	URL     string
	APIKey  string
	Tenant  string
	Timeout time.Duration
	JSON    bool
	base    string
}

func (o *clientOptions) flags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&o.URL, "url", envOr("FACTUM_URL", defaultURL), "server URL (FACTUM_URL)")
	f.StringVar(&o.APIKey, "api-key", "", "API key to send (default FACTUM_API_KEY; the flag shows in the process list, the variable does not)")
	f.StringVar(&o.Tenant, "tenant", "", "act in this tenant (the /tenant/{tenant} routes)")
	f.DurationVar(&o.Timeout, "timeout", defaultTimeout, "give up on the server after this long")
	f.BoolVar(&o.JSON, "json", false, "print the server's JSON answer instead of text")
	prev := cmd.PreRunE
	cmd.PreRunE = func(cmd *cobra.Command, args []string) error {
		base, err := parseBaseURL(o.URL)
		if err != nil {
			return err
		}
		o.base = base
		if o.Timeout <= 0 {
			return usageError{errors.New("--timeout must be positive")}
		}
		if prev != nil {
			return prev(cmd, args)
		}
		return nil
	}
}

// parseBaseURL checks a server URL: http or https, a host, no query.
func parseBaseURL(raw string) (string, error) {
	if !strings.Contains(raw, "://") {
		return "", fmt.Errorf("server URL %q has no scheme: use http://%s", raw, raw)
	}
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return "", fmt.Errorf("server URL %q: %w", raw, err)
	case u.Scheme != "http" && u.Scheme != "https":
		return "", fmt.Errorf("server URL %q: the scheme must be http or https", raw)
	case u.Host == "":
		return "", fmt.Errorf("server URL %q has no host", raw)
	case u.RawQuery != "" || u.Fragment != "":
		return "", fmt.Errorf("server URL %q: no query or fragment, please", raw)
	}
	return strings.TrimRight(u.String(), "/"), nil
}

// path joins the base URL, the tenant prefix and the escaped segments.
func (o *clientOptions) path(segments ...string) string {
	var b strings.Builder
	b.WriteString(o.base)
	if o.Tenant != "" {
		b.WriteString("/tenant/")
		b.WriteString(url.PathEscape(o.Tenant))
	}
	for _, s := range segments {
		b.WriteByte('/')
		b.WriteString(url.PathEscape(s))
	}
	return b.String()
}

// httpError is a server's answer with a status other than 2xx.
type httpError struct {
	status int
	body   httpapi.ErrorBody
}

func (e *httpError) Error() string {
	if e.body.Code == "" {
		return fmt.Sprintf("HTTP %d", e.status)
	}
	return fmt.Sprintf("HTTP %d %s: %s", e.status, e.body.Code, e.body.Message)
}

// reachError explains a request that got no answer.
func reachError(base string, err error) error {
	var dns *net.DNSError
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return fmt.Errorf("no factum server at %s (connection refused): start one with `factum serve`, or point --url or FACTUM_URL at it", base)
	case errors.As(err, &dns):
		return fmt.Errorf("cannot resolve the server's host in %s: %v", base, dns)
	case errors.Is(err, context.DeadlineExceeded), isTimeout(err):
		return fmt.Errorf("the server at %s did not answer in time (--timeout): %w", base, err)
	}
	return fmt.Errorf("talking to the server at %s: %w", base, err)
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// call sends one request and writes the answer to out: the JSON body
// indented with --json, else as text. A status other than 2xx is an error
// naming the code and message of the body.
func (o *clientOptions) call(ctx context.Context, method, target string, header http.Header, body []byte, out io.Writer) error {
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, target, bytes.NewReader(body))
	if err != nil {
		return err
	}
	for k, vs := range header {
		req.Header[k] = vs
	}
	if key := apiKey(o.APIKey); key != "" {
		req.Header.Set(auth.HeaderAPIKey, key)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return reachError(o.base, err)
	}
	defer res.Body.Close()
	if strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		_, err := io.Copy(out, res.Body)
		return err
	}
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return reachError(o.base, err)
	}
	if res.StatusCode/100 != 2 {
		e := &httpError{status: res.StatusCode}
		_ = json.Unmarshal(b, &e.body)
		if o.JSON {
			_ = writeJSON(out, b)
		}
		return e
	}
	if o.JSON {
		return writeJSON(out, b)
	}
	return writeText(out, b)
}

// writeJSON writes a JSON body indented.
func writeJSON(out io.Writer, b []byte) error {
	var pretty bytes.Buffer
	if json.Indent(&pretty, b, "", "  ") == nil {
		b = append(pretty.Bytes(), '\n')
	}
	_, err := out.Write(b)
	return err
}

// apiKey returns the API key a client command sends: the flag's, else
// FACTUM_API_KEY's.
func apiKey(flag string) string {
	if flag != "" {
		return flag
	}
	return os.Getenv("FACTUM_API_KEY")
}
