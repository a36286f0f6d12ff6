package engine

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"perch/engine/train"
)

// TestSpecialFilesRefused: a FIFO (nobody writing) or /dev/zero in place of
// every file a run or a request reads (train.jsonl, valid.jsonl, an image,
// adapter_config.json, adapters.safetensors) is refused within a second
// with an error naming the file, and a request afterwards still answers.
func TestSpecialFilesRefused(t *testing.T) {
	e := openTiny(t, "text-tiny", Options{Backend: BackendGo})
	special := func(t *testing.T, path, kind string) {
		os.Remove(path)
		if kind == "fifo" {
			if err := syscall.Mkfifo(path, 0o644); err != nil {
				t.Fatal(err)
			}
		} else if err := os.Symlink("/dev/zero", path); err != nil {
			t.Fatal(err)
		}
	}
	quick := func(t *testing.T, what string, f func() error) {
		t.Helper()
		t0 := time.Now()
		err := f()
		if took := time.Since(t0); err == nil || took > time.Second {
			t.Errorf("%s: err %v after %v", what, err, took)
			return
		}
		if !strings.Contains(err.Error(), "not a regular file") && !strings.Contains(err.Error(), "outside the data folder") {
			t.Errorf("%s: %v", what, err)
		}
	}
	row := `{"messages": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello."}]}` + "\n"
	for _, kind := range []string{"fifo", "device"} {
		for _, file := range []string{"train.jsonl", "valid.jsonl"} {
			data := t.TempDir()
			os.WriteFile(filepath.Join(data, "train.jsonl"), []byte(row+row), 0o644)
			special(t, filepath.Join(data, file), kind)
			quick(t, kind+" "+file, func() error {
				_, err := e.Train(context.Background(), TrainRequest{Data: data, Iters: 1, BatchSize: 1, AdapterDir: t.TempDir()})
				return err
			})
		}
		for _, file := range []string{"adapter_config.json", "adapters.safetensors"} {
			dir := copyAdapter(t)
			special(t, filepath.Join(dir, file), kind)
			quick(t, kind+" "+file, func() error {
				_, err := e.Generate(t.Context(), Request{PromptIDs: []int32{2, 3}, MaxTokens: 2, Adapter: dir})
				return err
			})
			quick(t, kind+" "+file+" to resume from", func() error {
				_, err := e.Train(context.Background(), TrainRequest{Train: []train.Row{{IDs: []int32{2, 3, 4}, PromptLen: 1}},
					Iters: 1, BatchSize: 1, AdapterDir: t.TempDir(), Resume: dir})
				return err
			})
		}
	}
	if ids, _ := run(t, e, Request{PromptIDs: []int32{2, 3}, MaxTokens: 3, IgnoreEOS: true, Adapter: loraTinyDir}); len(ids) != 3 {
		t.Errorf("a request after the refusals answered %v", ids)
	}
}
