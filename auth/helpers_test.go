package auth_test

import "net/http"

func newRequest(authorization string) (*http.Request, error) {
	r, err := http.NewRequest("GET", "/", nil)
	if err != nil {
		return nil, err
	}
	r.Header.Set("Authorization", authorization)
	return r, nil
}
