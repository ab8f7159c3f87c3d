// Package redisserver runs a private redis-server for one test on a random
// loopback port, in a temporary directory, so that a test can kill it and
// restart it without disturbing any other test or the shared server.
package redisserver
