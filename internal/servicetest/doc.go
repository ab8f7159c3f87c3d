// Package servicetest gives tests the addresses of the real services they
// need (PostgreSQL, Redis, NATS) from the environment variables
// FACTUM_POSTGRES_URL, FACTUM_REDIS_URL and FACTUM_NATS_URL.
//
// A test whose variable is unset is skipped with a message naming the
// variable, except under CI (CI=true), where a missing or unreachable
// service fails the test: CI must never count a skipped test as a pass.
package servicetest
