package httpapi_test

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/factum-go/factum/httpapi"
)

// TestOneStateShape: /state, /snapshot, PUT /snapshot and the snapshot
// queries answer the same document: the same member names, the identity
// nested as {context, aggregate, id, tenant}, times as RFC 3339 with
// milliseconds.
func TestOneStateShape(t *testing.T) {
	f := snapshotFixture(t)
	docs := map[string]map[string]json.RawMessage{}
	one := func(name string, b []byte) {
		t.Helper()
		var m map[string]json.RawMessage
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("%s: %s: %v", name, b, err)
		}
		docs[name] = m
	}
	r := f.do(t, "GET", "/cart/c2/state", "")
	wantOK(t, r)
	one("state", r.body)
	r = f.do(t, "GET", "/cart/c2/snapshot", "")
	wantOK(t, r)
	one("snapshot", r.body)
	r = f.do(t, "PUT", "/cart/c2/snapshot", "")
	wantOK(t, r)
	one("regenerated", r.body)
	r = f.do(t, "POST", "/cart/snapshot/single", `{"condition":{"operator":"AGGREGATE_ID","value":"c2"}}`)
	wantOK(t, r)
	one("single", r.body)
	r = f.do(t, "POST", "/cart/snapshot/list", `{"condition":{"operator":"AGGREGATE_ID","value":"c2"}}`)
	wantOK(t, r)
	var list []json.RawMessage
	if err := json.Unmarshal(r.body, &list); err != nil || len(list) != 1 {
		t.Fatalf("list %s", r.body)
	}
	one("list", list[0])
	r = f.do(t, "POST", "/cart/snapshot/paged", `{"condition":{"operator":"AGGREGATE_ID","value":"c2"},"pagination":{"index":1,"size":5}}`)
	wantOK(t, r)
	var page struct{ List []json.RawMessage }
	if err := json.Unmarshal(r.body, &page); err != nil || len(page.List) != 1 {
		t.Fatalf("paged %s", r.body)
	}
	one("paged", page.List[0])

	millis := regexp.MustCompile(`^"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z"$`)
	for name, d := range docs {
		var id map[string]string
		if err := json.Unmarshal(d["aggregateId"], &id); err != nil {
			t.Errorf("%s: aggregateId %s is not the nested identity: %v", name, d["aggregateId"], err)
		} else if id["context"] != "shop" || id["aggregate"] != "cart" || id["id"] != "c2" || id["tenant"] != "default" {
			t.Errorf("%s: aggregateId %v", name, id)
		}
		for _, k := range []string{"version", "deleted", "eventTime", "state"} {
			if _, ok := d[k]; !ok {
				t.Errorf("%s: no %q in %v", name, k, keys(d))
			}
		}
		for k, v := range d {
			if strings.HasSuffix(k, "Time") && !millis.Match(v) {
				t.Errorf("%s: %s %s is not RFC 3339 with milliseconds", name, k, v)
			}
		}
		if string(d["eventTime"]) != string(docs["state"]["eventTime"]) {
			t.Errorf("%s: eventTime %s, /state says %s", name, d["eventTime"], docs["state"]["eventTime"])
		}
	}
	for _, name := range []string{"regenerated", "single", "list", "paged"} {
		if !slices.Equal(keys(docs[name]), keys(docs["snapshot"])) {
			t.Errorf("%s members %v, /snapshot has %v", name, keys(docs[name]), keys(docs["snapshot"]))
		}
	}
	// Every member of /state is a member of the snapshot document, named alike.
	for _, k := range keys(docs["state"]) {
		if _, ok := docs["snapshot"][k]; !ok {
			t.Errorf("/state member %q is not in /snapshot %v", k, keys(docs["snapshot"]))
		}
	}
	// The shape reads back into the one Go type.
	b, _ := json.Marshal(docs["snapshot"])
	var st httpapi.AggregateState
	if err := json.Unmarshal(b, &st); err != nil || st.Version != 1 || st.SnapshotTime.IsZero() || time.Since(st.EventTime.Time) > time.Hour {
		t.Errorf("snapshot document %s reads back as %+v, %v", b, st, err)
	}
}

func keys(m map[string]json.RawMessage) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
