package crashtest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
	"time"
)

// Client talks to the service whose base URL may change between restarts
// (each start picks a random port).
type Client struct {
	base atomic.Pointer[string]
	http *http.Client
}

// NewClient returns a client of base with a per-request timeout.
func NewClient(base string, timeout time.Duration) *Client {
	c := &Client{http: &http.Client{
		Timeout:   timeout,
		Transport: &http.Transport{MaxIdleConnsPerHost: 64, MaxConnsPerHost: 128},
	}}
	c.SetBase(base)
	return c
}

// SetBase points the client at another base URL.
func (c *Client) SetBase(base string) { c.base.Store(&base) }

// Base is the current base URL.
func (c *Client) Base() string { return *c.base.Load() }

// HTTP is the underlying client.
func (c *Client) HTTP() *http.Client { return c.http }

// Response is a decoded HTTP answer.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// Do sends a request with an optional JSON body and headers (name, value
// pairs) and reads the whole answer. An error is a transport failure: the
// outcome of the request is unknown.
func (c *Client) Do(ctx context.Context, method, path string, body []byte, headers ...string) (Response, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.Base()+path, rd)
	if err != nil {
		return Response{}, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := c.http.Do(req)
	if err != nil {
		return Response{}, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return Response{}, err
	}
	return Response{Status: res.StatusCode, Header: res.Header, Body: b}, nil
}

// GetJSON GETs path and decodes a 200 answer into v; another status is an
// error naming it.
func (c *Client) GetJSON(ctx context.Context, path string, v any) error {
	res, err := c.Do(ctx, http.MethodGet, path, nil)
	if err != nil {
		return err
	}
	if res.Status != http.StatusOK {
		return &StatusError{Path: path, Status: res.Status, Body: string(res.Body)}
	}
	if err := json.Unmarshal(res.Body, v); err != nil {
		return fmt.Errorf("GET %s: %w in %s", path, err, res.Body)
	}
	return nil
}

// StatusError is an unexpected HTTP status.
type StatusError struct {
	Path   string
	Status int
	Body   string
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("%s: HTTP %d %s", e.Path, e.Status, e.Body)
}
