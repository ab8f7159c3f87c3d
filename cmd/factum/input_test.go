package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/httpapi"
)

// The small input holes of issue 13 and the query bomb, against the
// example service on SQLite and on PostgreSQL.
func TestServeRefusesBadInput(t *testing.T) {
	for _, b := range []struct {
		name  string
		start func(t *testing.T) *server
	}{
		{"SQLite", func(t *testing.T) *server { return startTestServer(t, t.TempDir()) }},
		{"PostgreSQL", startPostgresServer},
	} {
		t.Run(b.name, func(t *testing.T) {
			u := b.start(t).URL
			wantErr := func(what string, status int, body []byte, gotStatus int, code factum.Code) {
				t.Helper()
				var e httpapi.ErrorBody
				if gotStatus != status || json.Unmarshal(body, &e) != nil || e.Code != code {
					t.Fatalf("%s: %d %s, want %d %s", what, gotStatus, body, status, code)
				}
			}
			status, body := post(t, u+"/cart/c-utf/add_item", "{\"sku\":\"sku-1\xff\",\"qty\":1}")
			wantErr("invalid UTF-8", http.StatusBadRequest, body, status, factum.CodeBadRequest)
			if status, body := get(t, u+"/cart/c-utf/state"); status != http.StatusNotFound {
				t.Fatalf("a refused body created the cart: %d %s", status, body)
			}
			mustPost(t, u+"/cart/c-ver/add_item", `{"sku":"sku-1","qty":1}`)
			status, body = post(t, u+"/cart/c-ver/add_item", `{"sku":"sku-1","qty":1}`, httpapi.HeaderAggregateVersion, "+1")
			wantErr("version +1", http.StatusBadRequest, body, status, factum.CodeIllegalArgument)
			status, body = get(t, u+"/cart/c-ver/event/+1/1")
			wantErr("event range +1", http.StatusBadRequest, body, status, factum.CodeIllegalArgument)

			// An error net/http's server answers itself.
			c, err := net.Dial("tcp", strings.TrimPrefix(u, "http://"))
			if err != nil {
				t.Fatal(err)
			}
			io.WriteString(c, "GARBAGE\r\n\r\n")
			res, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				t.Fatal(err)
			}
			raw, _ := io.ReadAll(res.Body)
			c.Close()
			wantErr("malformed request", http.StatusBadRequest, raw, res.StatusCode, factum.CodeBadRequest)

			bomb := strings.Repeat(`{"operator":"AND","children":[`, 4990) + `{"operator":"ALL"}` + strings.Repeat(`]}`, 4990)
			status, body = post(t, u+"/cart/snapshot/count", bomb)
			wantErr("query bomb", http.StatusBadRequest, body, status, factum.CodeIllegalArgument)
			status, body = post(t, u+"/cart/snapshot/list", `{"condition":`+bomb+`}`)
			wantErr("query bomb in a list query", http.StatusBadRequest, body, status, factum.CodeIllegalArgument)
		})
	}
}
