package train

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

const streamSample = `{"type":"started","method":"sft","iters":2,"batch_size":1,"train_rows":2,"valid_rows":0,"adapter_path":"a","parameters":10}
{"type":"step","step":1,"loss":2.5,"grad_norm":1,"tokens":3,"tokens_per_s":100,"eta_s":1}
{"type":"checkpoint","step":1,"path":"a/checkpoints/step-00001"}
`

// TestTrainWatchFollows: watch prints a run's stream as it grows and ends
// with its done line; a torn line is skipped with a note.
func TestTrainWatchFollows(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "metrics.jsonl")
	go func() {
		time.Sleep(50 * time.Millisecond) // the file appears after watch starts
		// Locked before it appears (as a live run holds its stream), so that
		// the watcher never sees an unlocked stream, which means a dead run.
		f, _ := os.OpenFile(path+".new", os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		f.WriteString(streamSample + `{"type":"st`)
		os.Rename(path+".new", path)
		time.Sleep(50 * time.Millisecond)
		f.WriteString("ep\",\"step\":2,\"loss\":1.5,\"grad_norm\":1,\"tokens\":3}\nnot json\n")
		f.WriteString(`{"type":"done","steps":2,"adapter_path":"a","cancelled":false}` + "\n")
		f.Close()
	}()
	var out, errOut bytes.Buffer
	p := newTrainPrinter(&out, &errOut, false)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	code, err := watchStream(ctx, path, p, 10*time.Millisecond, 5*time.Second)
	if err != nil || code != 0 {
		t.Fatalf("code %d err %v", code, err)
	}
	got := out.String()
	for _, want := range []string{"training sft: 2 steps", "step 1/2: loss 2.5000", "step 2/2: loss 1.5000", "checkpoint a/checkpoints/step-00001", "line 5 of the stream is not an event", "done after 2 steps"} {
		if !strings.Contains(got, want) {
			t.Errorf("watch output lacks %q:\n%s", want, got)
		}
	}
	var js bytes.Buffer
	code, _ = watchStream(ctx, path, newTrainPrinter(&js, &errOut, true), time.Millisecond, 0)
	if code != 0 || strings.Count(js.String(), "\n") != 5 {
		t.Errorf("--json: %q", js.String())
	}
}

// TestTrainWatchNoRunOrDeadRun: watch on a folder where no run starts
// says so after --wait; on a stream no process writes and that never
// ended (a killed run), it says where the run stopped and how to continue.
func TestTrainWatchNoRunOrDeadRun(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	var out, errOut bytes.Buffer
	_, err := watchStream(ctx, filepath.Join(dir, "metrics.jsonl"), newTrainPrinter(&out, &errOut, false), 10*time.Millisecond, 50*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "no run in") {
		t.Errorf("no run: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "metrics.jsonl"), []byte(streamSample), 0o644)
	t0 := time.Now()
	code, err := watchStream(ctx, filepath.Join(dir, "metrics.jsonl"), newTrainPrinter(&out, &errOut, false), 10*time.Millisecond, 0)
	if code != 1 || err == nil || !strings.Contains(err.Error(), "stopped after step 1 without finishing") || time.Since(t0) > 5*time.Second {
		t.Errorf("dead run: code %d err %v", code, err)
	}
}

// FuzzStreamFollower: no stream bytes panic the follower.
func FuzzStreamFollower(f *testing.F) {
	f.Add([]byte(streamSample))
	f.Add([]byte(`{"type":"done","best_val_loss":null}` + "\n" + `{"type":"error","message":"x"}`))
	f.Add([]byte(`{"type":"step","loss":"x"}` + "\n\n\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var out bytes.Buffer
		w := &streamFollower{p: newTrainPrinter(&out, &out, false)}
		for len(data) > 0 {
			n := min(len(data), 7)
			w.feed(data[:n])
			data = data[n:]
		}
	})
}
