package pgserver

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Server is a private PostgreSQL server. Its methods are safe for
// concurrent use.
type Server struct {
	// Port is the TCP port on 127.0.0.1; it stays the same across
	// restarts.
	Port int

	t     testing.TB
	bin   string
	data  string
	cred  *syscall.Credential
	mu    sync.Mutex
	cmd   *exec.Cmd
	done  chan struct{}
	log   *os.File
	extra []string
}

// Option configures Start.
type Option func(*Server)

// Setting passes `-c name=value` to the server.
func Setting(name, value string) Option {
	return func(s *Server) { s.extra = append(s.extra, "-c", name+"="+value) }
}

func inCI() bool { return os.Getenv("CI") == "true" }

// Start initialises and starts a server that is stopped and deleted when
// the test ends. Without PostgreSQL binaries it skips the test (fails it
// under CI=true).
func Start(t testing.TB, opts ...Option) *Server {
	t.Helper()
	bin, err := findBinaries()
	if err != nil {
		if inCI() {
			t.Fatalf("pgserver: %v", err)
		}
		t.Skipf("pgserver: %v", err)
	}
	dir, err := os.MkdirTemp("", "factum-pg-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	s := &Server{t: t, bin: bin, data: filepath.Join(dir, "data")}
	for _, o := range opts {
		o(s)
	}
	if os.Geteuid() == 0 {
		cred, err := postgresUser()
		if err != nil {
			t.Fatalf("pgserver: running as root needs a postgres user: %v", err)
		}
		s.cred = cred
		if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := s.command("initdb", "-D", s.data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-sync").CombinedOutput(); err != nil {
		t.Fatalf("pgserver: initdb: %v\n%s", err, out)
	}
	if s.log, err = os.Create(filepath.Join(dir, "server.log")); err != nil {
		t.Fatal(err)
	}
	if s.Port, err = freePort(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s.Stop(syscall.SIGINT)
		s.log.Close()
	})
	if err := s.Start(); err != nil {
		t.Fatalf("pgserver: %v\n%s", err, s.Log())
	}
	return s
}

func findBinaries() (string, error) {
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p), nil
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return versionOf(dirs[i]) > versionOf(dirs[j]) })
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d, nil
		}
	}
	return "", errors.New("no initdb on PATH or under /usr/lib/postgresql/*/bin")
}

func versionOf(binDir string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return v
}

func postgresUser() (*syscall.Credential, error) {
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, err
	}
	uid, err := strconv.Atoi(u.Uid)
	if err != nil {
		return nil, err
	}
	gid, err := strconv.Atoi(u.Gid)
	if err != nil {
		return nil, err
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

func (s *Server) command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(filepath.Join(s.bin, name), args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred, Setpgid: true}
	cmd.Dir = filepath.Dir(s.data)
	return cmd
}

// URL is the connection URL of database db as the superuser postgres.
func (s *Server) URL(db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", s.Port, db)
}

// Log is the server's log so far.
func (s *Server) Log() string {
	b, _ := os.ReadFile(s.log.Name())
	return string(b)
}

// Start starts the (stopped) server and waits until it accepts
// connections. After an immediate stop it runs crash recovery first.
func (s *Server) Start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil {
		return errors.New("pgserver: already running")
	}
	args := append([]string{"-D", s.data, "-p", strconv.Itoa(s.Port),
		"-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories=",
		"-c", "max_connections=200", "-c", "shared_buffers=32MB"}, s.extra...)
	cmd := s.command("postgres", args...)
	cmd.Stdout, cmd.Stderr = s.log, s.log
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("pgserver: start postgres: %w", err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	s.cmd, s.done = cmd, done
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for {
		conn, err := pgx.Connect(ctx, s.URL("postgres"))
		if err == nil {
			conn.Close(ctx)
			return nil
		}
		select {
		case <-done:
			s.cmd = nil
			return fmt.Errorf("pgserver: postgres exited at start: %v", err)
		case <-ctx.Done():
			return fmt.Errorf("pgserver: postgres does not accept connections: %v", err)
		case <-time.After(25 * time.Millisecond):
		}
	}
}

// Stop stops the server with sig and waits for it to exit: SIGTERM is a
// smart shutdown, SIGINT a fast one (sessions are ended, a clean
// checkpoint), SIGQUIT an immediate one (no checkpoint: the next start
// runs crash recovery, as after a crash of the database). Stopping a
// stopped server does nothing.
func (s *Server) Stop(sig syscall.Signal) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Signal(sig)
	select {
	case <-s.done:
	case <-time.After(60 * time.Second):
		// Take the whole process group: the postmaster's children too.
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		<-s.done
	}
	s.cmd = nil
}

// Restart stops the server with sig, waits down, then starts it again on
// the same port and data.
func (s *Server) Restart(sig syscall.Signal, down time.Duration) error {
	s.Stop(sig)
	time.Sleep(down)
	return s.Start()
}

// CreateDatabase creates database name and returns its URL.
func (s *Server) CreateDatabase(ctx context.Context, name string) (string, error) {
	conn, err := pgx.Connect(ctx, s.URL("postgres"))
	if err != nil {
		return "", err
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		return "", fmt.Errorf("pgserver: create database %s: %w", name, err)
	}
	return s.URL(name), nil
}

// TerminateBackends ends the server sessions of database db whose current
// query contains match (every session when match is empty) with
// pg_terminate_backend, and returns how many it ended.
func (s *Server) TerminateBackends(ctx context.Context, db, match string) (int, error) {
	conn, err := pgx.Connect(ctx, s.URL("postgres"))
	if err != nil {
		return 0, err
	}
	defer conn.Close(ctx)
	var n int
	err = conn.QueryRow(ctx, `SELECT count(*) FROM (
		SELECT pg_terminate_backend(pid) FROM pg_stat_activity
		WHERE datname = $1 AND pid <> pg_backend_pid() AND ($2 = '' OR strpos(query, $2) > 0)) t`,
		db, match).Scan(&n)
	return n, err
}

// ActiveQueries returns the current query of every session of database db
// that is running one, for choosing what to terminate.
func (s *Server) ActiveQueries(ctx context.Context, db string) ([]string, error) {
	conn, err := pgx.Connect(ctx, s.URL("postgres"))
	if err != nil {
		return nil, err
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT query FROM pg_stat_activity
		WHERE datname = $1 AND pid <> pg_backend_pid() AND state = 'active'`, db)
	if err != nil {
		return nil, err
	}
	qs, err := pgx.CollectRows(rows, pgx.RowTo[string])
	for i := range qs {
		qs[i] = strings.Join(strings.Fields(qs[i]), " ")
	}
	return qs, err
}
