package redisserver

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Persistence is how the server keeps data across a restart.
type Persistence int

// The persistence modes.
const (
	// None: no RDB, no AOF; a restart starts empty (the shared CI
	// server's configuration).
	None Persistence = iota
	// AOFAlways: the append-only file, fsynced before each write is
	// acknowledged.
	AOFAlways
	// AOFEverySec: the append-only file fsynced once a second (Redis's
	// default when AOF is on): a kill of the process loses nothing the
	// kernel has, a power loss up to a second.
	AOFEverySec
)

// Server is a private redis-server. Its methods are safe for concurrent
// use.
type Server struct {
	// Port is the TCP port on 127.0.0.1; it stays the same across
	// restarts.
	Port int

	bin  string
	dir  string
	args []string
	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
}

func inCI() bool { return os.Getenv("CI") == "true" }

// Start starts a server that is killed and deleted when the test ends.
// Without redis-server on PATH it skips the test (fails it under CI=true).
func Start(t testing.TB, p Persistence) *Server {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if inCI() {
			t.Fatalf("redisserver: %v", err)
		}
		t.Skipf("redisserver: %v", err)
	}
	dir := t.TempDir()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	s := &Server{Port: port, bin: bin, dir: dir}
	s.args = []string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--dir", dir,
		"--save", "", "--daemonize", "no", "--logfile", filepath.Join(dir, "redis.log")}
	switch p {
	case None:
		s.args = append(s.args, "--appendonly", "no")
	case AOFAlways:
		s.args = append(s.args, "--appendonly", "yes", "--appendfsync", "always")
	case AOFEverySec:
		s.args = append(s.args, "--appendonly", "yes", "--appendfsync", "everysec")
	}
	t.Cleanup(func() { s.Kill() })
	if err := s.Start(); err != nil {
		t.Fatalf("%v\n%s", err, s.Log())
	}
	return s
}

// URL is the server's redis:// URL.
func (s *Server) URL() string { return fmt.Sprintf("redis://127.0.0.1:%d/0", s.Port) }

// Log is the server's log so far.
func (s *Server) Log() string {
	b, _ := os.ReadFile(filepath.Join(s.dir, "redis.log"))
	return string(b)
}

// Start starts the stopped server and waits until it accepts connections
// (it has loaded its data by then).
func (s *Server) Start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil {
		return errors.New("redisserver: already running")
	}
	cmd := exec.Command(s.bin, s.args...)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("redisserver: start: %w", err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	s.cmd, s.done = cmd, done
	deadline := time.Now().Add(30 * time.Second)
	for {
		if pingOK(s.Port) {
			return nil
		}
		select {
		case <-done:
			s.cmd = nil
			return errors.New("redisserver: redis-server exited at start")
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return errors.New("redisserver: redis-server does not answer PING")
		}
	}
}

// pingOK sends an inline PING and reports whether PONG came back (a
// server still loading its data answers LOADING instead).
func pingOK(port int) bool {
	c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second)
	if err != nil {
		return false
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return false
	}
	buf := make([]byte, 16)
	n, _ := c.Read(buf)
	return string(buf[:n]) == "+PONG\r\n"
}

// Kill kills the server with SIGKILL (a crash: nothing is flushed beyond
// what its persistence mode already wrote) and waits for it to exit.
func (s *Server) Kill() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGKILL)
	<-s.done
	s.cmd = nil
}
