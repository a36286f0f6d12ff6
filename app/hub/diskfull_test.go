//go:build unix

package hub

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestPullDiskFull runs a pull in a child process whose file-size limit
// (ulimit -f 256 KiB) is below the weight file, so the write fails
// mid-file the way a full disk does. The partial must be gone from blobs/,
// nothing published, and the error must say so.
func TestPullDiskFull(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash not found: needed to set ulimit -f for the child process")
	}
	fh := newFakeHub(t, modelFiles(), "model.safetensors")
	dir := filepath.Join(t.TempDir(), "hub")
	cmd := exec.Command("bash", "-c", `ulimit -f 256 && exec "$0" -test.run='^TestDiskFullHelper$' -test.v`, os.Args[0])
	cmd.Env = append(os.Environ(), "HUB_DISKFULL_DIR="+dir, "HUB_DISKFULL_ENDPOINT="+fh.hub.URL)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("helper failed: %v\n%s", err, out)
	}
	_, msg, ok := strings.Cut(string(out), "PULLERR: ")
	if !ok {
		t.Fatalf("helper output has no PULLERR line:\n%s", out)
	}
	msg, _, _ = strings.Cut(msg, "\n")
	t.Logf("error in the child: %s", msg)
	if !strings.Contains(msg, "not enough disk space") || !strings.Contains(msg, "partial file was removed") {
		t.Fatalf("unclear disk-full error: %s", msg)
	}
	blobs, _ := os.ReadDir(filepath.Join(dir, "models--org--model", "blobs"))
	for _, b := range blobs {
		st, _ := os.Stat(filepath.Join(dir, "models--org--model", "blobs", b.Name()))
		if strings.HasSuffix(b.Name(), ".incomplete") || st.Size() >= 300_000 || b.Name() == fh.blob("model.safetensors") {
			t.Fatalf("partial or unverified blob left in blobs/: %s (%d bytes)", b.Name(), st.Size())
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "models--org--model", "refs", "main")); err == nil {
		t.Fatal("refs/main written")
	}
	// With the limit gone, the same cache completes.
	h := &Hub{Dir: dir, Endpoint: fh.hub.URL, MaxAttempts: 1, Memory: testHub(t, fh).Memory, DiskFree: testHub(t, fh).DiskFree}
	if _, err := h.Pull(context.Background(), "org/model", "main", nil); err != nil {
		t.Fatal(err)
	}
}

// TestDiskFullHelper is the child of TestPullDiskFull.
func TestDiskFullHelper(t *testing.T) {
	dir := os.Getenv("HUB_DISKFULL_DIR")
	if dir == "" {
		t.Skip("helper for TestPullDiskFull; runs only as its child process")
	}
	h := &Hub{Dir: dir, Endpoint: os.Getenv("HUB_DISKFULL_ENDPOINT"), MaxAttempts: 3,
		DiskFree: func(string) (int64, error) { return 1 << 40, nil }, // the limit is invisible to statfs
		Memory:   func() (Budget, error) { return Budget{Usable: 1 << 40}, nil }}
	_, err := h.Pull(context.Background(), "org/model", "main", nil)
	if !errors.Is(err, ErrDiskFull) {
		fmt.Printf("PULLERR: want ErrDiskFull, got %v\n", err)
		return
	}
	fmt.Printf("PULLERR: %v\n", err)
}
