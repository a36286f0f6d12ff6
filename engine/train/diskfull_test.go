package train

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"perch/engine/lora"
)

// TestDiskFullTmpfs runs the real trainer into small tmpfs mounts (root and
// mount needed; skipped otherwise) of a range of sizes, so the disk fills
// at each kind of write: the run fails naming the file, metrics.json lists
// only checkpoints that load (each with its resume state), and the
// top-level adapter and state load and are the last listed checkpoint's
// unless replacing them is the write that failed (then the previous ones
// stay, whole).
func TestDiskFullTmpfs(t *testing.T) {
	if testing.Short() {
		t.Skip("mounts tmpfs; skipped with -short")
	}
	mnt := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=16k", "tmpfs", mnt).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs here (needs root): %v %s", err, strings.TrimSpace(string(out)))
	}
	exec.Command("umount", mnt).Run()
	kinds := map[string]int{}
	for kb := 4; kb <= 804; kb += 20 {
		if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+strconv.Itoa(kb)+"k", "tmpfs", mnt).CombinedOutput(); err != nil {
			t.Fatalf("mount: %v %s", err, out)
		}
		dir := filepath.Join(mnt, "adapter")
		_, err := realRun(t, dir, Host{})
		if err != nil {
			k := checkFull(t, kb, dir, err)
			kinds[k]++
			t.Logf("%d KiB: %s", kb, k)
		}
		if out, err := exec.Command("umount", mnt).CombinedOutput(); err != nil {
			t.Fatalf("umount: %v %s", err, out)
		}
	}
	var got []string
	for k, n := range kinds {
		got = append(got, k+":"+strconv.Itoa(n))
	}
	sort.Strings(got)
	t.Logf("the disk filled at: %s", strings.Join(got, " "))
	for _, k := range []string{"checkpoint", "top-level adapter", "metrics.json"} {
		if kinds[k] == 0 {
			t.Errorf("no size filled the disk at a %s write (got %v)", k, kinds)
		}
	}
}

// checkFull checks a run that failed on a full disk and says which write
// filled it.
func checkFull(t *testing.T, kb int, dir string, err error) string {
	t.Helper()
	msg := err.Error()
	if !strings.Contains(msg, "no space left on device") {
		t.Fatalf("%d KiB: the run failed with %v", kb, err)
	}
	kind := ""
	switch {
	case strings.HasPrefix(msg, "adapter folder"):
		kind = "adapter folder"
	case strings.HasPrefix(msg, "checkpoint "):
		kind = "checkpoint"
		if strings.Contains(strings.SplitN(msg, "\n", 2)[0], "the adapter at the top") {
			kind = "top-level adapter"
		}
		if strings.Contains(strings.SplitN(msg, "\n", 2)[0], "metrics.json:") {
			kind = "metrics.json"
		}
	case strings.HasPrefix(msg, "the adapter at the top"), strings.HasPrefix(msg, "final adapter"):
		kind = "top-level adapter"
	case strings.HasPrefix(msg, MetricsFile):
		kind = "metrics.json"
	case strings.HasPrefix(msg, "metrics stream"):
		kind = "metrics stream"
	default:
		t.Fatalf("%d KiB: the error names no write: %v", kb, err)
	}
	if !strings.Contains(msg, dir) {
		t.Errorf("%d KiB: the error names no file: %v", kb, err)
	}
	if m, merr := ReadMetrics(dir); merr == nil {
		last := -1
		for _, c := range m.Checkpoints {
			if _, err := lora.Load(filepath.Join(dir, c.Path)); err != nil {
				t.Errorf("%d KiB: metrics.json lists %s, which does not load: %v", kb, c.Path, err)
			}
			if _, err := ReadState(filepath.Join(dir, c.Path)); err != nil {
				t.Errorf("%d KiB: %s has no resume state: %v", kb, c.Path, err)
			}
			last = c.Step
		}
		st, err := ReadState(dir)
		if err != nil && !os.IsNotExist(errors.Unwrap(err)) && !strings.Contains(err.Error(), "has no "+ResumeFile) {
			t.Errorf("%d KiB: the top-level resume state does not load: %v", kb, err)
		}
		// Older than the last checkpoint only when replacing it is the write that failed.
		if err == nil && st.Step < last && !strings.Contains(msg, "the adapter at the top") && !strings.Contains(msg, "final adapter") {
			t.Errorf("%d KiB: the top-level state is of step %d, older than the listed checkpoint of step %d: %v", kb, st.Step, last, msg)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, lora.WeightsFile)); err == nil {
		if _, err := lora.Load(dir); err != nil {
			t.Errorf("%d KiB: the top-level adapter does not load: %v", kb, err)
		}
	}
	return kind
}
