package httpapi_test

import (
	"strings"
	"sync/atomic"
	"testing"
)

// The document's error responses describe what the routes answer: a 403
// never stands for another tenant's aggregate (that is a 404 on every
// route, so a 403 would confirm the aggregate exists), and every command
// route lists the 503 with Retry-After that a clustered service answers
// when it cannot reach NATS or the owner of the aggregate's partition.
func TestOpenAPIErrorResponsesMatchTheRoutes(t *testing.T) {
	doc := loadOpenAPI(t, compensationFixture(t, new(atomic.Bool)))

	forbidden := doc.Components.Responses["Forbidden"]
	if forbidden == nil || forbidden.Value == nil || forbidden.Value.Description == nil {
		t.Fatal("no Forbidden response in the document")
	}
	text := *forbidden.Value.Description
	if mt := forbidden.Value.Content.Get("application/json"); mt != nil {
		if ex, ok := mt.Example.(map[string]any); ok {
			text += " " + ex["code"].(string)
		}
	}
	for _, wrong := range []string{"TenantMismatch", "another tenant"} {
		if strings.Contains(text, wrong) {
			t.Errorf("the 403 response names %q, but another tenant's aggregate is a 404: %s", wrong, text)
		}
	}

	commands := 0
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			if op.Extensions["x-factum-role"] != "send" {
				continue
			}
			commands++
			if op.Responses.Value("503") == nil {
				t.Errorf("%s %s: a command route without the 503 a clustered service answers", method, path)
			}
		}
	}
	if commands == 0 {
		t.Fatal("no command route in the document")
	}
	unavailable := doc.Components.Responses["ServiceUnavailable"]
	if d := unavailable.Value.Description; d == nil || !strings.Contains(*d, "partition") || !strings.Contains(*d, "Retry-After") {
		t.Errorf("the 503 response does not say a clustered service answers it for an unreachable partition owner, with Retry-After: %v", d)
	}
}
