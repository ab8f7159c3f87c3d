package httpapi

import (
	"net/http"

	"github.com/factum-go/factum"
)

// Status maps a factum code to its HTTP status. It is the one table every
// HTTP surface uses; an unknown code maps to 500.
func Status(c factum.Code) int {
	switch c {
	case factum.CodeOk:
		return http.StatusOK
	case factum.CodeNotFound:
		return http.StatusNotFound
	case factum.CodeBadRequest, factum.CodeIllegalArgument, factum.CodeCommandValidation:
		return http.StatusBadRequest
	case factum.CodeIllegalState, factum.CodeDuplicateRequestID, factum.CodeEventVersionConflict,
		factum.CodeDuplicateAggregateID, factum.CodeCommandExpectVersionConflict, factum.CodeSourcingVersionConflict:
		return http.StatusConflict
	case factum.CodeRequestTimeout:
		return http.StatusRequestTimeout
	case factum.CodeTooManyRequests:
		return http.StatusTooManyRequests
	case factum.CodeIllegalAccessDeletedAggregate:
		return http.StatusGone
	case factum.CodeIllegalAccessOwnerAggregate, factum.CodeTenantMismatch, factum.CodeForbidden:
		return http.StatusForbidden
	case factum.CodeUnauthorized:
		return http.StatusUnauthorized
	default:
		return http.StatusInternalServerError
	}
}
