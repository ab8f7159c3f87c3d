package auth_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/factum-go/factum/auth"
	"github.com/golang-jwt/jwt/v5"
)

// BenchmarkKeySetVerify measures one API key check against sets of n keys
// (every stored hash is compared).
func BenchmarkKeySetVerify(b *testing.B) {
	for _, n := range []int{1, 100, 10000} {
		b.Run(fmt.Sprintf("keys=%d", n), func(b *testing.B) {
			var lines []string
			for i := range n {
				lines = append(lines, fmt.Sprintf("k%d %s tenants=acme roles=read", i, auth.HashKey(fmt.Sprintf("key-%d-0123456789", i))))
			}
			ks, err := auth.ParseKeys(strings.Join(lines, "\n"))
			if err != nil {
				b.Fatal(err)
			}
			key := fmt.Sprintf("key-%d-0123456789", n/2)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := ks.Verify(key); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkJWTVerify measures one token check per signing method.
func BenchmarkJWTVerify(b *testing.B) {
	t := &testing.T{}
	v := verifier(t, nil)
	for _, m := range []struct {
		method jwt.SigningMethod
		key    any
	}{{jwt.SigningMethodHS256, hsKey}, {jwt.SigningMethodRS256, rsaKey}, {jwt.SigningMethodES256, ecKey}} {
		b.Run(m.method.Alg(), func(b *testing.B) {
			c := claims(nil)
			c["exp"] = now.Add(24 * 365 * 100 * 3600e9).Unix()
			tok, err := jwt.NewWithClaims(m.method, c).SignedString(m.key)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := v.Verify(tok); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
