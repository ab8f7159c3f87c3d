package main

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/auth"
	"github.com/factum-go/factum/httpapi"
	"github.com/factum-go/factum/nats"
)

// clusterPath is the instance view's route: the instances and their
// partitions, for admins (like /metrics: it spans every tenant).
const clusterPath = "/cluster"

// clusterReady is /readyz's answer on a ready clustered instance.
type clusterReady struct {
	Status   string `json:"status"`
	Instance string `json:"instance"`
	// Partitions lists the partitions this instance owns now.
	Partitions []int `json:"partitions"`
	// Of is the number of partitions of the context.
	Of int `json:"of"`
	// Instances is the number of live instances it sees.
	Instances int `json:"instances"`
}

// clusterInfo is the instance view's answer.
type clusterInfo struct {
	nats.ClusterView
	// Signals counts the wait signals this instance routed.
	Signals nats.SignalStats `json:"signals"`
	// Connected says whether this instance has its NATS connection.
	Connected bool `json:"connected"`
}

// handler serves, in front of next, /readyz with the partitions this
// instance owns and the instance view; next alone without a cluster.
// ready decides readiness, as httpapi.Config.Ready does.
func (c *cluster) handler(next http.Handler, access httpapi.AccessConfig, ready func(context.Context) error) http.Handler {
	if c == nil {
		return next
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		if err := ready(r.Context()); err != nil {
			fe := factum.AsError(err)
			writeBody(w, http.StatusServiceUnavailable, httpapi.ErrorBody{Code: fe.Code, Message: factum.MessageOf(err), Retryable: true})
			return
		}
		v := c.parts.View()
		writeBody(w, http.StatusOK, clusterReady{Status: "ready", Instance: v.Instance, Partitions: c.parts.Owned(), Of: v.Partitions, Instances: len(c.parts.Instances())})
	})
	mux.Handle("GET "+clusterPath, httpapi.RequireRole(access, auth.RoleAdmin, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		writeBody(w, http.StatusOK, c.info())
	})))
	mux.Handle("/", next)
	return mux
}

// info is the instance view now.
func (c *cluster) info() clusterInfo {
	return clusterInfo{ClusterView: c.parts.View(), Signals: c.signals.Stats(), Connected: c.nc.IsConnected()}
}

func writeBody(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
