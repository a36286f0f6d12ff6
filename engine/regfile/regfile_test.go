package regfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestRefusesSpecialFiles: a FIFO (nobody writing), a device, a folder and
// a symlink to a FIFO are refused at once; a regular file and a symlink
// to one are read.
func TestRefusesSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatalf("mkfifo: %v", err)
	}
	os.Symlink(fifo, filepath.Join(dir, "to-fifo"))
	os.WriteFile(filepath.Join(dir, "ok"), []byte("hello"), 0o644)
	os.Symlink(filepath.Join(dir, "ok"), filepath.Join(dir, "to-ok"))
	for _, p := range []string{fifo, filepath.Join(dir, "to-fifo"), "/dev/zero", dir} {
		t0 := time.Now()
		_, err := ReadFile(p, 1<<20)
		if !errors.Is(err, ErrNotRegular) || time.Since(t0) > time.Second {
			t.Errorf("%s: err %v after %v", p, err, time.Since(t0))
		}
	}
	for _, p := range []string{"ok", "to-ok"} {
		if b, err := ReadFile(filepath.Join(dir, p), 5); err != nil || string(b) != "hello" {
			t.Errorf("%s: %q %v", p, b, err)
		}
	}
	if _, err := ReadFile(filepath.Join(dir, "ok"), 4); err == nil || !strings.Contains(err.Error(), "4-byte limit") {
		t.Errorf("over the cap: %v", err)
	}
}
