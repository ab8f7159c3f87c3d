package httpapi

import (
	"net/http"
	"testing"

	"github.com/factum-go/factum"
)

func TestStatus(t *testing.T) {
	tests := map[factum.Code]int{
		factum.CodeOk:                            http.StatusOK,
		factum.CodeNotFound:                      http.StatusNotFound,
		factum.CodeIllegalArgument:               http.StatusBadRequest,
		factum.CodeCommandValidation:             http.StatusBadRequest,
		factum.CodeDuplicateRequestID:            http.StatusConflict,
		factum.CodeEventVersionConflict:          http.StatusConflict,
		factum.CodeCommandExpectVersionConflict:  http.StatusConflict,
		factum.CodeRequestTimeout:                http.StatusRequestTimeout,
		factum.CodeTooManyRequests:               http.StatusTooManyRequests,
		factum.CodeIllegalAccessDeletedAggregate: http.StatusGone,
		factum.CodeTenantMismatch:                http.StatusForbidden,
		factum.CodeIllegalAccessOwnerAggregate:   http.StatusForbidden,
		factum.CodeInternalServerError:           http.StatusInternalServerError,
		factum.CodeUnauthorized:                  http.StatusUnauthorized,
		factum.CodeForbidden:                     http.StatusForbidden,
		factum.Code("Unknown"):                   http.StatusInternalServerError,
	}
	for c, want := range tests {
		if got := Status(c); got != want {
			t.Errorf("Status(%s) = %d, want %d", c, got, want)
		}
	}
}
