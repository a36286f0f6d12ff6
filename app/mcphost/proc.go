//go:build unix

package mcphost

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"perch/internal/durable"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// baseEnv lists the variables a server gets from Perch's own environment
// besides those its config gives: PATH, so that "npx" or "uvx" resolve.
// Nothing else (no HOME, no tokens, no proxies) leaks to a server.
var baseEnv = []string{"PATH"}

// serverEnv is the environment a server's process runs with.
func serverEnv(cfg Config) []string {
	var env []string
	for _, k := range baseEnv {
		if _, given := cfg.Env[k]; !given {
			if v, ok := os.LookupEnv(k); ok {
				env = append(env, k+"="+v)
			}
		}
	}
	for k, v := range cfg.Env {
		env = append(env, k+"="+v)
	}
	return env
}

// process is a running stdio server: its own process group (so stopping
// it ends what it started too), dying with Perch on Linux (Pdeathsig), and
// recorded in a pid file so that the next start can end it if Perch was
// killed before it could.
type process struct {
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	stdout  *frameReader
	stderr  *tailBuffer
	done    chan struct{} // closed when the process has exited
	waitErr error
	pidFile string
}

func startProcess(cfg Config, pidDir string) (*process, error) {
	cmd := exec.Command(cfg.Command[0], cfg.Command[1:]...)
	cmd.Env = serverEnv(cfg)
	cmd.SysProcAttr = sysProcAttr()
	p := &process{cmd: cmd, stderr: &tailBuffer{max: stderrTail}, done: make(chan struct{})}
	cmd.Stderr = p.stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := startLocked(cmd); err != nil {
		return nil, fmt.Errorf("starting %s: %w", cfg.Command[0], err)
	}
	p.stdin, p.stdout = stdin, &frameReader{r: stdout, max: MaxMessage}
	if pidDir != "" {
		p.pidFile = writePidFile(pidDir, cmd.Process.Pid, cfg.Command)
	}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// exited reports the process's exit, if it has.
func (p *process) exited() (bool, error) {
	select {
	case <-p.done:
		return true, p.waitErr
	default:
		return false, nil
	}
}

// stop closes the server's stdin, gives it a moment to exit, then ends
// its process group: SIGTERM, then SIGKILL.
func (p *process) stop() {
	p.stdin.Close()
	pgid := p.cmd.Process.Pid
	for _, sig := range []syscall.Signal{0, syscall.SIGTERM, syscall.SIGKILL} {
		if sig != 0 {
			syscall.Kill(-pgid, sig)
		}
		select {
		case <-p.done:
			syscall.Kill(-pgid, syscall.SIGKILL) // what it started, if anything is left
			if p.pidFile != "" {
				os.Remove(p.pidFile)
			}
			return
		case <-time.After(2 * time.Second):
		}
	}
}

// pidRecord is a pid file: the server and the Perch process that owns it,
// each with its command line so that a reused pid is never mistaken.
type pidRecord struct {
	Pid       int    `json:"pid"`
	Cmdline   string `json:"cmdline"`
	Owner     int    `json:"owner"`
	OwnerLine string `json:"owner_cmdline"`
}

func writePidFile(dir string, pid int, argv []string) string {
	rec := pidRecord{Pid: pid, Cmdline: strings.Join(argv, " "), Owner: os.Getpid(), OwnerLine: cmdline(os.Getpid())}
	data, _ := json.Marshal(rec)
	path := filepath.Join(dir, strconv.Itoa(pid)+".json")
	if os.MkdirAll(dir, 0o700) != nil || durable.WriteFile(path, data, 0o700) != nil {
		return ""
	}
	return path
}

// ReapLeftovers ends the servers a Perch process started and did not stop
// (it was killed): for each pid file whose owner is gone, the server is
// killed with its process group if its pid still runs the recorded
// command line. It returns how many it ended.
func ReapLeftovers(dir string) int {
	entries, _ := os.ReadDir(dir)
	n := 0
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		path := filepath.Join(dir, e.Name())
		data, err := os.ReadFile(path)
		var rec pidRecord
		if err != nil || json.Unmarshal(data, &rec) != nil || rec.Pid <= 1 {
			os.Remove(path)
			continue
		}
		if rec.Owner == os.Getpid() || (alive(rec.Owner) && cmdline(rec.Owner) == rec.OwnerLine) {
			continue // its Perch still runs and will stop it
		}
		if alive(rec.Pid) && cmdline(rec.Pid) == rec.Cmdline {
			syscall.Kill(-rec.Pid, syscall.SIGKILL)
			syscall.Kill(rec.Pid, syscall.SIGKILL)
			n++
		}
		os.Remove(path)
	}
	return n
}

func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// cmdline is a process's command line, words joined by spaces ("" when it
// cannot be read).
func cmdline(pid int) string {
	if data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline"); err == nil {
		return strings.Join(strings.Split(strings.TrimRight(string(data), "\x00"), "\x00"), " ")
	}
	out, err := exec.Command("ps", "-o", "command=", "-p", strconv.Itoa(pid)).Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// tailBuffer keeps the last max bytes written to it (a server's stderr).
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > t.max {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-t.max:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(bytes.ToValidUTF8(t.buf, []byte("?")))
}

// frameReader passes a server's stdout through and fails once one line
// (one JSON-RPC message) passes max bytes, remembering why.
type frameReader struct {
	r    io.Reader
	max  int
	line int
	mu   sync.Mutex
	err  error
}

func (f *frameReader) Read(p []byte) (int, error) {
	if err := f.failure(); err != nil {
		return 0, err
	}
	n, err := f.r.Read(p)
	for i := 0; i < n; i++ {
		if p[i] == '\n' {
			f.line = 0
			continue
		}
		f.line++
		if f.line > f.max {
			f.mu.Lock()
			f.err = fmt.Errorf("the server sent a message over the %d MiB limit", f.max>>20)
			f.mu.Unlock()
			return i, f.err
		}
	}
	return n, err
}

func (f *frameReader) failure() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.err
}
