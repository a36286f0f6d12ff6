//go:build linux

package chat

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"perch/app/history"
	"perch/app/mcphost/mcptest"
	"perch/app/toolset"
	"perch/engine"
	"perch/ui"
)

const toolsHelperEnv = "PERCH_KILL9_TOOLS_DIR"

// TestKill9ToolsHelper is the process TestKill9MidToolCall kills: the real
// service with the real tool set, whose one server (the Go test server,
// a child process) runs a call that hangs; it prints "ACK" once the
// message is committed.
func TestKill9ToolsHelper(t *testing.T) {
	dir := os.Getenv(toolsHelperEnv)
	if dir == "" {
		t.Skip("helper process for TestKill9MidToolCall (runs only when that test starts it)")
	}
	store, _, err := history.Open(dir)
	if err != nil {
		fmt.Println("ERR", err)
		os.Exit(3)
	}
	tools, err := toolset.Open(dir)
	if err != nil {
		fmt.Println("ERR", err)
		os.Exit(3)
	}
	if len(tools.List()) == 0 {
		words, env := mcptest.Command("ok", os.Getenv("PERCH_KILL9_TOOLS_LOG"))
		if err := tools.Add("slow", "'"+strings.Join(words, "' '")+"'", env, ""); err != nil {
			fmt.Println("ERR", err)
			os.Exit(3)
		}
		tools.Approvals().Allow("slow", "hang")
	}
	rt, _ := newRuntime(&fakeEngine{tokens: toks("ok"), call: &engine.ParsedCall{ID: "h", Name: "hang", Arguments: json.RawMessage(`{}`)}}, e2b)
	rt.Select("e2b")
	svc := New(store, rt, MediaProbe{}, ui.DefaultSettings)
	svc.SaveEvery = 2 * time.Millisecond
	svc.MCP = tools
	r, err := svc.Send(context.Background(), "", "run "+os.Getenv("PERCH_KILL9_RUN"), nil)
	if err != nil {
		fmt.Println("ERR", err)
		os.Exit(3)
	}
	fmt.Println("ACK")
	for range answers(r) {
	}
	fmt.Println("ERR the hanging call ended")
	os.Exit(3)
}

// TestKill9MidToolCall kills Perch's chat with SIGKILL while a tool call
// runs, 20 times at random moments after the call reached the server:
// the server dies with it (no orphan; the next start's reap finds none
// alive), the history passes integrity_check, and the answer reopens
// interrupted with its call on record, cut short.
func TestKill9MidToolCall(t *testing.T) {
	if testing.Short() {
		t.Skip("kill -9 loop takes about 10 s; skipped with -short")
	}
	dir := t.TempDir()
	log := filepath.Join(t.TempDir(), "calls.log")
	rng := rand.New(rand.NewSource(1))
	const runs = 20
	for run := 0; run < runs; run++ {
		cmd := exec.Command(os.Args[0], "-test.run=^TestKill9ToolsHelper$", "-test.count=1")
		cmd.Env = append(os.Environ(), toolsHelperEnv+"="+dir, "PERCH_KILL9_TOOLS_LOG="+log, fmt.Sprintf("PERCH_KILL9_RUN=%d", run))
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		lines := make(chan string, 64)
		go func() {
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				lines <- sc.Text()
			}
			close(lines)
		}()
		if l := <-lines; l != "ACK" {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("run %d: helper said %q", run, l)
		}
		calls := func() int {
			b, _ := os.ReadFile(log)
			return strings.Count(string(b), "hang ")
		}
		for end := time.Now().Add(30 * time.Second); calls() <= run && time.Now().Before(end); {
			time.Sleep(10 * time.Millisecond)
		}
		if calls() <= run {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("run %d: the call never reached the server", run)
		}
		pids, _ := filepath.Glob(filepath.Join(dir, "mcp", "pids", "*.json"))
		if len(pids) != 1 {
			t.Fatalf("run %d: pid files %q, want 1", run, pids)
		}
		pid, _ := strconv.Atoi(strings.TrimSuffix(filepath.Base(pids[0]), ".json"))
		time.Sleep(time.Duration(rng.Intn(50)) * time.Millisecond)
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		for end := time.Now().Add(5 * time.Second); mcptest.Running(pid) && time.Now().Before(end); {
			time.Sleep(20 * time.Millisecond)
		}
		if mcptest.Running(pid) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("run %d: server %d outlived the kill -9 by 5 s", run, pid)
		}

		store, rec, err := history.Open(dir)
		if err != nil || rec.Quarantined != "" {
			t.Fatalf("run %d: reopen after kill: %v (quarantined %q)", run, err, rec.Quarantined)
		}
		if res, err := store.IntegrityCheck(); err != nil || res != "ok" {
			t.Fatalf("run %d: integrity_check = %q, %v", run, res, err)
		}
		convs, _ := store.Conversations("")
		if len(convs) != run+1 {
			t.Fatalf("run %d: %d conversations", run, len(convs))
		}
		ms, _ := store.Messages(convs[0].ID)
		if len(ms) != 2 || ms[1].State != history.Interrupted || len(ms[1].Tools) != 1 ||
			ms[1].Tools[0].Calls[0].Name != "hang" || ms[1].Tools[0].Calls[0].Done {
			t.Fatalf("run %d: the answer reopened as %+v", run, ms[len(ms)-1])
		}
		store.Close()
		// The next start's reap: the pid file of a dead server goes.
		set, err := toolset.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		set.Close()
		if left, _ := filepath.Glob(filepath.Join(dir, "mcp", "pids", "*.json")); len(left) != 0 {
			t.Fatalf("run %d: pid files left after the reap: %q", run, left)
		}
	}
}
