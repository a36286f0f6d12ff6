package dataset

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestFolderSpecialFilesRefused: importing a folder whose train.jsonl or
// valid.jsonl is a FIFO or /dev/zero fails within a second, naming the file.
func TestFolderSpecialFilesRefused(t *testing.T) {
	row := `{"messages": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello."}]}` + "\n"
	for _, file := range []string{"train.jsonl", "valid.jsonl"} {
		for _, kind := range []string{"fifo", "device"} {
			dir := t.TempDir()
			os.WriteFile(filepath.Join(dir, "train.jsonl"), []byte(row), 0o644)
			p := filepath.Join(dir, file)
			os.Remove(p)
			if kind == "fifo" {
				syscall.Mkfifo(p, 0o644)
			} else {
				os.Symlink("/dev/zero", p)
			}
			t0 := time.Now()
			_, err := ReadFolder(dir)
			if err == nil || !strings.Contains(err.Error(), file) || !strings.Contains(err.Error(), "not a regular file") || time.Since(t0) > time.Second {
				t.Errorf("%s as a %s: err %v after %v", file, kind, err, time.Since(t0))
			}
		}
	}
}
