//go:build linux

package cli

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"perch/app/mcphost"
	"perch/app/mcphost/mcptest"
)

// TestKill9AskMidCall: perch ask --mcp is killed with SIGKILL while its
// server runs a call that hangs; the server does not outlive it, and the
// next start's reap finds nothing left to end.
func TestKill9AskMidCall(t *testing.T) {
	data := t.TempDir()
	log := filepath.Join(t.TempDir(), "calls.log")
	args, _ := json.Marshal([]string{"--model", tinyModel, "--backend", "go", "--max-tokens", "40", "--json",
		"--mcp", goMCP("ok", log), "--approve", "all", "--tool-choice", "hang", "wait"})
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "PERCH_TEST_ASK_ARGS="+string(args), "PERCH_DATA_DIR="+data)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if b, _ := os.ReadFile(log); strings.HasPrefix(string(b), "hang ") {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if b, _ := os.ReadFile(log); !strings.HasPrefix(string(b), "hang ") {
		t.Fatalf("the call never reached the server (log %q)", b)
	}
	pids, _ := filepath.Glob(filepath.Join(data, "mcp", "pids", "*.json"))
	if len(pids) != 1 {
		t.Fatalf("pid files %q, want 1", pids)
	}
	pid, _ := strconv.Atoi(strings.TrimSuffix(filepath.Base(pids[0]), ".json"))
	if !mcptest.Running(pid) {
		t.Fatalf("server %d not running mid-call", pid)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	for end := time.Now().Add(5 * time.Second); mcptest.Running(pid) && time.Now().Before(end); {
		time.Sleep(50 * time.Millisecond)
	}
	if mcptest.Running(pid) {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Fatalf("server %d outlived perch ask's kill -9 by 5s", pid)
	}
	// the next start
	if n := mcphost.ReapLeftovers(filepath.Join(data, "mcp", "pids")); n != 0 {
		t.Errorf("the next start ended %d leftovers; the server was already gone", n)
	}
	if left, _ := filepath.Glob(filepath.Join(data, "mcp", "pids", "*.json")); len(left) != 0 {
		t.Errorf("pid files after the next start: %q", left)
	}
}
