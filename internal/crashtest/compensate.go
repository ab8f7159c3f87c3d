package crashtest

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
)

// RetryCompensations does what an operator does after a fault: it forces a
// retry of every compensation record that has not succeeded, and returns
// how many it retried. A saga step recorded for compensation waits for the
// scheduler's backoff (minutes by default) otherwise, longer than an audit
// waits; after the retries an unfinished saga is a lost step.
func RetryCompensations(ctx context.Context, c *Client) (int, error) {
	var ids []string
	for page := 1; ; page++ {
		var p struct {
			Total int `json:"total"`
			List  []struct {
				ID struct {
					ID string `json:"id"`
				} `json:"id"`
				Status string `json:"status"`
			} `json:"list"`
		}
		if err := c.GetJSON(ctx, "/compensation/executions?size=100&page="+strconv.Itoa(page), &p); err != nil {
			return 0, err
		}
		for _, e := range p.List {
			if e.Status != "SUCCEEDED" {
				ids = append(ids, e.ID.ID)
			}
		}
		if len(p.List) == 0 || page*100 >= p.Total {
			break
		}
	}
	for _, id := range ids {
		res, err := c.Do(ctx, http.MethodPost, "/compensation/executions/"+id+"/retry", nil)
		if err != nil {
			return 0, err
		}
		if res.Status != http.StatusOK {
			return 0, fmt.Errorf("crashtest: retry of compensation record %s: status %d: %.300s", id, res.Status, res.Body)
		}
	}
	return len(ids), nil
}
