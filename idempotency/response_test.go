package idempotency

import (
	"bytes"
	"errors"
	"net/http"
	"reflect"
	"testing"
)

func TestStoredResponseRoundTrip(t *testing.T) {
	cases := []storedResponse{
		{status: 201, header: http.Header{"Location": {"/orders/1"}, "Etag": {`"v1"`}}, body: []byte(`{"id":1}`)},
		{status: 200, header: http.Header{"Set-Several": {"a", "b", ""}}, body: []byte{0, 0xff, '\n'}},
		{status: 204, header: http.Header{}, body: []byte{}},
		{status: 201, header: http.Header{"Content-Type": {"text/plain"}}, omitted: 1 << 40},
	}
	for _, c := range cases {
		got, err := decodeResponse(c.encode())
		if err != nil {
			t.Fatalf("decode(encode(%+v)): %v", c, err)
		}
		if got.status != c.status || !reflect.DeepEqual(got.header, c.header) || !bytes.Equal(got.body, c.body) || got.omitted != c.omitted {
			t.Fatalf("round trip of %+v gave %+v", c, got)
		}
	}
}

func TestStoredResponseMalformed(t *testing.T) {
	good := storedResponse{status: 201, header: http.Header{"Location": {"/x"}}, body: []byte("body")}.encode()
	// Every truncation of a valid encoding is refused, never misread.
	for i := range len(good) {
		if _, err := decodeResponse(good[:i]); !errors.Is(err, errBadResponse) {
			t.Fatalf("truncated to %d bytes: %v", i, err)
		}
	}
	for name, b := range map[string][]byte{
		"nil":             nil,
		"other version":   append([]byte{2}, good[1:]...),
		"unknown flag":    append([]byte{1, 2}, good[2:]...),
		"status 0":        append([]byte{1, 0, 0, 0}, good[4:]...),
		"trailing bytes":  append(append([]byte{}, good...), 'x'),
		"too many header": {1, 0, 0, 200, 0xff, 0xff, 0x03},
	} {
		if _, err := decodeResponse(b); !errors.Is(err, errBadResponse) {
			t.Errorf("%s: %v, want errBadResponse", name, err)
		}
	}
}

func FuzzDecodeResponse(f *testing.F) {
	f.Add(storedResponse{status: 201, header: http.Header{"A": {"b"}}, body: []byte("c")}.encode())
	f.Add(storedResponse{status: 200, header: http.Header{}, omitted: 5}.encode())
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := decodeResponse(b)
		if err != nil {
			return
		}
		// Whatever decodes re-encodes to something that decodes the same.
		again, err := decodeResponse(r.encode())
		if err != nil || again.status != r.status || !bytes.Equal(again.body, r.body) || again.omitted != r.omitted {
			t.Fatalf("re-decoding %+v gave %+v, %v", r, again, err)
		}
	})
}
