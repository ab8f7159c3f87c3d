package httpapi

import (
	"encoding/json"
	"fmt"

	"github.com/factum-go/factum/auth"
)

// openRoutes are the paths served without a credential.
var openRoutes = []string{"/healthz", "/readyz", "/openapi.json"}

// withSecurity adds the security schemes to the OpenAPI document b when
// the API is authenticated: an API key (header X-API-Key, or a bearer
// token) or a JWT bearer token, required on every operation but the open
// routes. It describes the
// schemes only: no key, hash or secret is ever part of the document.
func (h *Handler) withSecurity(b []byte, err error) ([]byte, error) {
	if err != nil || h.cfg.Access.Authenticator == nil {
		return b, err
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("httpapi: OpenAPI document: %w", err)
	}
	components, _ := doc["components"].(map[string]any)
	if components == nil {
		components = map[string]any{}
		doc["components"] = components
	}
	components["securitySchemes"] = map[string]any{
		"apiKey": map[string]any{
			"type": "apiKey", "in": "header", "name": auth.HeaderAPIKey,
			"description": "An API key; Authorization: Bearer <key> works too.",
		},
		"bearer": map[string]any{
			"type": "http", "scheme": "bearer", "bearerFormat": "JWT",
			"description": "A JWT (HS256, RS256 or ES256) whose claims carry the tenants and roles, or an API key.",
		},
	}
	doc["security"] = []any{map[string]any{"apiKey": []any{}}, map[string]any{"bearer": []any{}}}
	paths, _ := doc["paths"].(map[string]any)
	for _, p := range openRoutes {
		item, _ := paths[p].(map[string]any)
		for _, op := range item {
			if op, ok := op.(map[string]any); ok {
				op["security"] = []any{}
			}
		}
	}
	return json.MarshalIndent(doc, "", "  ")
}
