// Package redis is factum's Redis adapter, on github.com/redis/go-redis/v9.
//
// Every operation that must be atomic runs inside Redis as one command or
// one Lua script (loaded once and called by SHA, with a fallback when the
// script cache was flushed), never as a read followed by a write in Go.
// Temporary records use Redis's own expiry, and every judgment of expiry
// uses Redis's clock as the command or script runs; no application
// server's clock takes part.
//
// Durability: Redis acknowledges a write before it reaches disk or a
// replica unless it is configured otherwise (appendfsync always, WAIT). A
// crash or a failover can therefore forget acknowledged writes. Use Redis
// for what may be lost and re-created; keep permanent records on the SQL
// adapters.
package redis
