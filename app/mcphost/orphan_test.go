//go:build linux

package mcphost

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"perch/app/mcphost/mcptest"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestKill9LeavesNoOrphan: a Perch-like process starts a server, calls a
// tool that hangs, and is killed with SIGKILL mid-call; its server dies
// with it.
func TestKill9LeavesNoOrphan(t *testing.T) {
	dir := t.TempDir()
	owner := exec.Command(os.Args[0], "-test.run=^$")
	owner.Env = append(os.Environ(), "PERCH_MCPTEST_OWNER="+dir)
	out, err := owner.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := owner.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "server ") {
		owner.Process.Kill()
		owner.Wait()
		t.Fatalf("owner said %q (%v)", line, err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(line, "server ")))
	if !mcptest.Running(pid) {
		t.Fatalf("server %d is not running", pid)
	}
	time.Sleep(200 * time.Millisecond) // the hanging call is under way
	owner.Process.Signal(syscall.SIGKILL)
	owner.Wait()
	deadline := time.Now().Add(5 * time.Second)
	for mcptest.Running(pid) && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if mcptest.Running(pid) {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Fatalf("server %d outlived its killed parent by 5s", pid)
	}
	if n := ReapLeftovers(dir); n != 0 {
		t.Errorf("reaped %d servers that were already gone", n)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*.json")); len(left) != 0 {
		t.Errorf("pid files left after the reap: %q", left)
	}
}

// TestReapLeftovers: a leftover whose owner is gone and whose pid still
// runs the recorded command is killed; a pid running something else is
// not.
func TestReapLeftovers(t *testing.T) {
	dir := t.TempDir()
	start := func() *exec.Cmd {
		c := exec.Command("sleep", "300")
		c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		return c
	}
	left, other := start(), start()
	defer other.Process.Kill()
	deadOwner := exec.Command("true")
	deadOwner.Run()
	gone := deadOwner.Process.Pid
	writeRecord := func(pid int, line string) {
		data := []byte(`{"pid":` + strconv.Itoa(pid) + `,"cmdline":"` + line + `","owner":` + strconv.Itoa(gone) + `,"owner_cmdline":"perch"}`)
		if err := os.WriteFile(filepath.Join(dir, strconv.Itoa(pid)+".json"), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	writeRecord(left.Process.Pid, "sleep 300")
	writeRecord(other.Process.Pid, "node server.js") // the pid was reused by another program
	if n := ReapLeftovers(dir); n != 1 {
		t.Fatalf("reaped %d, want 1", n)
	}
	if err := left.Wait(); err == nil || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("leftover: %v, want killed", err)
	}
	if !mcptest.Running(other.Process.Pid) {
		t.Fatal("a process whose command line does not match was killed")
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*.json")); len(left) != 0 {
		t.Errorf("pid files left: %q", left)
	}
}
