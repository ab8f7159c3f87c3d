package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/factum-go/factum/httpapi"
	"github.com/spf13/cobra"
)

// clientOptions are the flags of the commands that talk to a server.
type clientOptions struct {
	URL    string
	Tenant string
}

func (o *clientOptions) flags(cmd *cobra.Command) {
	cmd.Flags().StringVar(&o.URL, "url", envOr("FACTUM_URL", "http://127.0.0.1:8080"), "server URL (FACTUM_URL)")
	cmd.Flags().StringVar(&o.Tenant, "tenant", "", "act in this tenant (the /tenant/{tenant} routes)")
}

// path joins the base URL, the tenant prefix and the escaped segments.
func (o *clientOptions) path(segments ...string) string {
	var b strings.Builder
	b.WriteString(strings.TrimRight(o.URL, "/"))
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

// call sends one request and copies the response body to out, indented
// when it is JSON. A status other than 2xx is an error naming the error
// code of the body.
func call(ctx context.Context, method, target string, header http.Header, body []byte, out io.Writer) error {
	req, err := http.NewRequestWithContext(ctx, method, target, bytes.NewReader(body))
	if err != nil {
		return err
	}
	for k, vs := range header {
		req.Header[k] = vs
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		_, err := io.Copy(out, res.Body)
		return err
	}
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return err
	}
	var pretty bytes.Buffer
	if json.Indent(&pretty, b, "", "  ") == nil {
		b = append(pretty.Bytes(), '\n')
	}
	if _, err := out.Write(b); err != nil {
		return err
	}
	if res.StatusCode/100 != 2 {
		var e httpapi.ErrorBody
		_ = json.Unmarshal(b, &e)
		return fmt.Errorf("HTTP %d %s", res.StatusCode, e.Code)
	}
	return nil
}
