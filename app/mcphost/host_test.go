package mcphost

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"perch/app/mcphost/mcptest"
)

func TestMain(m *testing.M) {
	mcptest.MaybeServe()
	if dir := os.Getenv("PERCH_MCPTEST_OWNER"); dir != "" {
		ownServer(dir)
	}
	os.Exit(m.Run())
}

// goServer is the Go test server in mode, run from this test binary.
func goServer(t *testing.T, mode string) (Config, string) {
	log := filepath.Join(t.TempDir(), "calls.log")
	cmd, env := mcptest.Command(mode, log)
	return Config{Name: "go", Command: cmd, Env: env, StartTimeout: 10 * time.Second}, log
}

func newServer(t *testing.T, cfg Config) *Server {
	s, err := NewServer(cfg, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func calls(t *testing.T, log string) []string {
	data, err := os.ReadFile(log)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(string(data)), "\n")
}

func TestListAndCall(t *testing.T) {
	cfg, log := goServer(t, "ok")
	s := newServer(t, cfg)
	if st := s.Status(); st.State != Stopped {
		t.Fatalf("state before first use %s, want stopped (servers start when needed)", st.State)
	}
	tools, err := s.Tools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]Tool{}
	for _, tl := range tools {
		names[tl.Name] = tl
	}
	echo, ok := names["echo"]
	if len(tools) != 6 || !ok || echo.Description != "Repeats the text it is given." || !strings.Contains(string(echo.InputSchema), `"maxLength":40`) {
		t.Fatalf("tools %+v", tools)
	}
	r := s.Call(context.Background(), "echo", json.RawMessage(`{"text":"hi <b>"}`))
	if r.IsError || r.Content != "echo: hi <b>" {
		t.Fatalf("echo: %+v", r)
	}
	if got := calls(t, log); len(got) != 1 || !strings.HasPrefix(got[0], `echo {"text":"hi \u003cb\u003e"}`) && !strings.HasPrefix(got[0], `echo {"text":"hi <b>"}`) {
		t.Fatalf("server's log %q", got)
	}
	pid := s.proc.cmd.Process.Pid
	s.Close()
	if alive(pid) {
		t.Fatalf("server %d still runs after Close", pid)
	}
	if st := s.Status(); st.State != Stopped {
		t.Fatalf("state after Close %s", st.State)
	}
}

func TestEnvironmentIsOnlyWhatWasGiven(t *testing.T) {
	t.Setenv("PERCH_SECRET_TOKEN", "leak")
	env := serverEnv(Config{Env: map[string]string{"A": "1"}})
	for _, kv := range env {
		if !strings.HasPrefix(kv, "PATH=") && kv != "A=1" {
			t.Errorf("server environment has %q", kv)
		}
	}
	if len(env) != 2 {
		t.Errorf("server environment %q, want PATH and A", env)
	}
}

func TestServerThatNeverStarts(t *testing.T) {
	cfg, _ := goServer(t, "never")
	cfg.StartTimeout = time.Second
	s := newServer(t, cfg)
	seen := make(chan State, 1)
	go func() {
		time.Sleep(300 * time.Millisecond)
		seen <- s.Status().State // while Tools waits on the start
	}()
	start := time.Now()
	_, err := s.Tools(context.Background())
	if st := <-seen; st != Starting {
		t.Errorf("state during the start %s, want starting", st)
	}
	if err == nil || !strings.Contains(err.Error(), "did not answer within 1s") {
		t.Fatalf("err %v", err)
	}
	if d := time.Since(start); d > 8*time.Second {
		t.Errorf("a server that never answers held the caller %s", d)
	}
	st := s.Status()
	if st.State != Failed || !strings.Contains(st.Stderr, "waiting forever") {
		t.Fatalf("status %+v", st)
	}
	r := s.Call(context.Background(), "echo", nil)
	if !r.IsError || !strings.Contains(r.Content, "could not start") {
		t.Fatalf("call on a server that never starts: %+v", r)
	}
}

func TestServerThatExitsAtStart(t *testing.T) {
	cfg, _ := goServer(t, "exit")
	s := newServer(t, cfg)
	_, err := s.Tools(context.Background())
	st := s.Status()
	if err == nil || st.State != Failed || !strings.Contains(st.Err, "exited") || !strings.Contains(st.Stderr, "no configuration file found") {
		t.Fatalf("err %v, status %+v", err, st)
	}
}

func TestServerThatExitsMidCall(t *testing.T) {
	cfg, log := goServer(t, "ok")
	s := newServer(t, cfg)
	r := s.Call(context.Background(), "crash", nil)
	if !r.IsError || !strings.Contains(r.Content, "exited") {
		t.Fatalf("crash: %+v", r)
	}
	if st := s.Status(); st.State != Failed || !strings.Contains(st.Err, "exited") || !strings.Contains(st.Stderr, "crashing on purpose") {
		t.Errorf("status after the crash %+v", st)
	}
	if r := s.Call(context.Background(), "add", json.RawMessage(`{"a":2,"b":40}`)); r.IsError || r.Content != "42" {
		t.Fatalf("the next call after a crash: %+v", r)
	}
	if st := s.Status(); st.State != Ready || st.Err != "" {
		t.Errorf("status after the restart %+v", st)
	}
	if got := calls(t, log); len(got) != 2 {
		t.Fatalf("server log %q", got)
	}
}

func TestServerThatHangs(t *testing.T) {
	cfg, _ := goServer(t, "ok")
	cfg.CallTimeout = time.Second
	s := newServer(t, cfg)
	if _, err := s.Tools(context.Background()); err != nil {
		t.Fatal(err)
	}
	pid := s.proc.cmd.Process.Pid
	start := time.Now()
	r := s.Call(context.Background(), "hang", nil)
	if !r.IsError || !strings.Contains(r.Content, "did not answer within 1s") {
		t.Fatalf("hang: %+v", r)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("a hung call took %s", d)
	}
	if alive(pid) {
		t.Errorf("the hung server %d still runs", pid)
	}
}

func TestCancelStopsACall(t *testing.T) {
	cfg, _ := goServer(t, "ok")
	s := newServer(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	r := s.Call(ctx, "hang", nil)
	if !r.IsError || r.Content != "stopped" {
		t.Fatalf("cancelled call: %+v", r)
	}
}

func TestServerThatFloods(t *testing.T) {
	cfg, _ := goServer(t, "ok")
	s := newServer(t, cfg)
	if _, err := s.Tools(context.Background()); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	r := s.Call(context.Background(), "big", json.RawMessage(`{"mb":50}`))
	runtime.ReadMemStats(&after)
	if !r.IsError || !strings.Contains(r.Content, "over the 4 MiB limit") {
		t.Fatalf("50 MB: %.200s", r.Content)
	}
	// everything this process allocated during the call, not only what it
	// still holds: well under the 50 MB the server sent
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 24<<20 {
		t.Errorf("reading a 50 MB answer allocated %d MiB", alloc>>20)
	} else {
		t.Logf("reading a 50 MB answer allocated %.1f MiB", float64(alloc)/(1<<20))
	}
	r = s.Call(context.Background(), "big", json.RawMessage(`{"mb":1}`))
	if r.IsError || len(r.Content) > MaxResultText+100 || !strings.Contains(r.Content, "[truncated: ") {
		t.Fatalf("1 MiB: %d bytes, error %v, tail %q", len(r.Content), r.IsError, r.Content[max(0, len(r.Content)-60):])
	}
}

func TestStreamableHTTP(t *testing.T) {
	srv := mcptest.NewServer("", true)
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	defer ts.Close()
	s := newServer(t, Config{Name: "web", URL: ts.URL})
	if r := s.Call(context.Background(), "add", json.RawMessage(`{"a":1,"b":2}`)); r.IsError || r.Content != "3" {
		t.Fatalf("add over HTTP: %+v", r)
	}
	if r := s.Call(context.Background(), "big", json.RawMessage(`{"mb":50}`)); !r.IsError {
		t.Fatalf("50 MB over HTTP was not an error")
	}
	for _, u := range []string{"http://192.168.1.2:8080/mcp", "http://example.com/mcp", "file:///x", "http://[::2]/"} {
		if err := (Config{Name: "x", URL: u}).Check(); err == nil {
			t.Errorf("%s accepted", u)
		}
	}
	for _, u := range []string{"http://localhost:1/mcp", "http://127.0.0.5/", "https://[::1]:8/"} {
		if err := (Config{Name: "x", URL: u}).Check(); err != nil {
			t.Errorf("%s: %v", u, err)
		}
	}
}

// ownServer is the child of TestKill9LeavesNoOrphan: it starts a server,
// prints its pid and waits to be killed.
func ownServer(dir string) {
	cmd, env := mcptest.Command("ok", "")
	h, err := NewHost([]Config{{Name: "go", Command: cmd, Env: env}}, dir)
	if err == nil {
		_, errs := h.Tools(context.Background())
		if len(errs) > 0 {
			err = errs[0]
		}
	}
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	fmt.Println("server", h.servers[0].proc.cmd.Process.Pid)
	go h.Call(context.Background(), "go", "hang", nil)
	time.Sleep(time.Hour)
}
