package ffmpeg

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

const staleHelperEnv = "PERCH_FFMPEG_STALE_HELPER"

var mp4Head = []byte("\x00\x00\x00\x18ftypisom\x00\x00\x00\x00isommp41")

// TestStaleInputHelper holds an input folder open until it is killed.
func TestStaleInputHelper(t *testing.T) {
	if os.Getenv(staleHelperEnv) == "" {
		t.Skip("helper process for TestKilledInputIsSwept (runs only when that test starts it)")
	}
	in, err := NewInput(mp4Head)
	if err != nil {
		t.Fatal(err)
	}
	os.Stdout.WriteString("PATH " + in.Path + "\n")
	time.Sleep(time.Minute)
}

// TestKilledInputIsSwept: a process SIGKILLed while preprocessing leaves
// its input folder (the uploaded media) behind; the next process to
// prepare media removes it, and keeps live processes' folders.
func TestKilledInputIsSwept(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	cmd := exec.Command(os.Args[0], "-test.run", "^TestStaleInputHelper$")
	cmd.Env = append(os.Environ(), staleHelperEnv+"=1")
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var path string
	for lines := bufio.NewScanner(out); lines.Scan(); {
		if p, ok := strings.CutPrefix(lines.Text(), "PATH "); ok {
			path = p
			break
		}
	}
	if path == "" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatal("the helper did not make its input")
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	dead := filepath.Dir(path)
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("the killed process's input should still be there before the sweep: %v", err)
	}
	mine, err := os.MkdirTemp("", tempPrefix+"1-") // PID 1 is alive
	if err != nil {
		t.Fatal(err)
	}
	old := filepath.Join(tmp, tempPrefix+"123456789") // an older build's unnamed folder
	os.Mkdir(old, 0o700)
	os.Chtimes(old, time.Now().Add(-48*time.Hour), time.Now().Add(-48*time.Hour))
	sweepStale()
	if _, err := os.Stat(dead); !os.IsNotExist(err) {
		t.Fatalf("the killed process's folder %s survived the sweep (%v)", dead, err)
	}
	if _, err := os.Stat(old); !os.IsNotExist(err) {
		t.Fatal("a day-old unnamed folder survived the sweep")
	}
	if _, err := os.Stat(mine); err != nil {
		t.Fatalf("a live process's folder was removed: %v", err)
	}
}
