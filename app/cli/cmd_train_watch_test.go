package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
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
		os.WriteFile(path, []byte(streamSample+`{"type":"st`), 0o644)
		time.Sleep(50 * time.Millisecond)
		f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
		f.WriteString("ep\",\"step\":2,\"loss\":1.5,\"grad_norm\":1,\"tokens\":3}\nnot json\n")
		f.WriteString(`{"type":"done","steps":2,"adapter_path":"a","cancelled":false}` + "\n")
		f.Close()
	}()
	var out, errOut bytes.Buffer
	p := newTrainPrinter(&out, &errOut, false)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	code, err := watchStream(ctx, path, p, 10*time.Millisecond)
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
	code, _ = watchStream(ctx, path, newTrainPrinter(&js, &errOut, true), time.Millisecond)
	if code != 0 || strings.Count(js.String(), "\n") != 5 {
		t.Errorf("--json: %q", js.String())
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
