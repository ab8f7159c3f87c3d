package prepare

import (
	"testing"
	"time"
)

func TestPreparedValueHelpers(t *testing.T) {
	at := time.Date(2030, 5, 6, 7, 8, 9, 123_456_789, time.UTC)
	tests := []struct {
		name        string
		pv          PreparedValue[int]
		wantExpires int64
		wantForever bool
	}{
		{"Forever", Forever(1), TTLForever, true},
		{"ExpiresAt truncates to the millisecond", ExpiresAt(1, at), at.UnixMilli(), false},
		{"ExpiresAt in another zone", ExpiresAt(1, at.In(time.FixedZone("x", 3600))), at.UnixMilli(), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.pv.ExpiresAt != tt.wantExpires || tt.pv.IsForever() != tt.wantForever {
				t.Fatalf("got %+v forever=%v; want expiry %d forever=%v", tt.pv, tt.pv.IsForever(), tt.wantExpires, tt.wantForever)
			}
			exp, finite := tt.pv.Expiry()
			if finite == tt.wantForever || (finite && exp.UnixMilli() != tt.wantExpires) {
				t.Fatalf("Expiry() = %v, %v", exp, finite)
			}
		})
	}
	if Forever(1).ExpiredAt(time.Unix(1<<40, 0)) {
		t.Fatal("a forever value expired")
	}
	before := time.Now()
	pv := ExpiresIn(1, time.Minute)
	if pv.ExpiresAt < before.Add(time.Minute).UnixMilli() || pv.ExpiresAt > time.Now().Add(time.Minute).UnixMilli() {
		t.Fatalf("ExpiresIn(1m) = %d, not a minute from now", pv.ExpiresAt)
	}
}
