package chat

import (
	"bufio"
	"context"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"perch/app/history"
	"perch/ui"
)

const helperEnv = "PERCH_KILL9_HELPER_DIR"

// TestKill9Helper is the process the kill -9 test kills: it sends messages
// through the real service, each followed by a streaming answer, and prints
// "ACK <text>" once Send has returned (the turn is committed).
func TestKill9Helper(t *testing.T) {
	dir := os.Getenv(helperEnv)
	if dir == "" {
		t.Skip("helper process for TestHistorySurvivesKill9 (runs only when that test starts it)")
	}
	store, _, err := history.Open(dir)
	if err != nil {
		fmt.Println("ERR", err)
		os.Exit(3)
	}
	rt, _ := newRuntime(&fakeEngine{forever: true, every: 200 * time.Microsecond}, e2b)
	rt.Select("e2b")
	svc := New(store, rt, MediaProbe{}, ui.DefaultSettings)
	svc.SaveEvery = 2 * time.Millisecond
	run := os.Getenv("PERCH_KILL9_RUN")
	convID := ""
	for i := 0; ; i++ {
		text := fmt.Sprintf("run %s message %d", run, i)
		ctx, cancel := context.WithCancel(context.Background())
		r, err := svc.Send(ctx, convID, text, nil)
		if err != nil {
			fmt.Println("ERR", err)
			os.Exit(3)
		}
		convID = r.ConversationID
		fmt.Println("ACK", text)
		for a := range answers(r) {
			if len(a.Text) >= 80 {
				cancel() // stop after a while (40 tokens) and ask again
			}
		}
		cancel()
	}
}

// TestHistorySurvivesKill9 kills a sending process with SIGKILL at random
// moments, 60 times; after each kill every acknowledged message is stored,
// no answer is left "streaming", and the database passes integrity_check.
func TestHistorySurvivesKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("kill -9 loop takes about 15 s; skipped with -short")
	}
	dir := t.TempDir()
	rng := rand.New(rand.NewSource(1))
	const runs = 60
	acked, interruptedSeen := 0, 0
	for run := 0; run < runs; run++ {
		cmd := exec.Command(os.Args[0], "-test.run=^TestKill9Helper$", "-test.count=1")
		cmd.Env = append(os.Environ(), helperEnv+"="+dir, fmt.Sprintf("PERCH_KILL9_RUN=%d", run))
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		lines := make(chan string, 1024)
		go func() {
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				lines <- sc.Text()
			}
			close(lines)
		}()
		// Wait for the first ACK, then kill somewhere in the next 0–150 ms.
		var sent []string
		select {
		case l, ok := <-lines:
			if !ok || !strings.HasPrefix(l, "ACK ") {
				cmd.Process.Kill()
				cmd.Wait()
				t.Fatalf("run %d: helper said %q", run, l)
			}
			sent = append(sent, strings.TrimPrefix(l, "ACK "))
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			t.Fatalf("run %d: helper never acknowledged a message", run)
		}
		time.Sleep(time.Duration(rng.Intn(150)) * time.Millisecond)
		cmd.Process.Signal(syscall.SIGKILL)
		for l := range lines {
			if strings.HasPrefix(l, "ACK ") {
				sent = append(sent, strings.TrimPrefix(l, "ACK "))
			} else if strings.HasPrefix(l, "ERR") {
				t.Fatalf("run %d: helper failed: %s", run, l)
			}
		}
		cmd.Wait()
		acked += len(sent)

		store, rec, err := history.Open(dir)
		if err != nil {
			t.Fatalf("run %d: reopen after kill: %v", run, err)
		}
		if rec.Quarantined != "" {
			t.Fatalf("run %d: database was damaged and quarantined", run)
		}
		interruptedSeen += rec.Interrupted
		if res, err := store.IntegrityCheck(); err != nil || res != "ok" {
			t.Fatalf("run %d: integrity_check = %q, %v", run, res, err)
		}
		stored := map[string]bool{}
		convs, _ := store.Conversations("")
		for _, c := range convs {
			ms, _ := store.Messages(c.ID)
			for _, m := range ms {
				if m.Role == "user" {
					stored[m.Text] = true
				}
				if m.State == history.Streaming {
					t.Fatalf("run %d: answer still marked streaming after recovery", run)
				}
			}
		}
		for _, s := range sent {
			if !stored[s] {
				t.Fatalf("run %d: acknowledged message %q lost", run, s)
			}
		}
		store.Close()
	}
	if interruptedSeen == 0 {
		t.Fatal("no kill landed during an answer: the test did not exercise the case it is for")
	}
	t.Logf("%d runs, %d acknowledged messages all kept, %d answers recovered as interrupted", runs, acked, interruptedSeen)
}
