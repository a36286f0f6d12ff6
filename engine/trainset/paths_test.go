package trainset

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"perch/engine/train"
	"strings"
	"syscall"
	"testing"
	"time"
)

const outsideEnv = "PERCH_MEDIA_OUTSIDE_FOLDERS"

// outsideFolders makes a secret and a photo outside any data folder and one
// data folder per way a row can point outside: "..", an absolute path, a
// symlinked file, a symlinked folder. Each folder's train.jsonl has a good
// row, then the bad one (line 2).
func outsideFolders(t *testing.T) (outside string, folders []string) {
	outside = t.TempDir()
	os.WriteFile(filepath.Join(outside, "secret.png"), []byte("root:x:0:0:root:/root:/bin/bash\n"), 0o644)
	os.MkdirAll(filepath.Join(outside, "photos"), 0o755)
	img, err := os.ReadFile(tinyImage)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(outside, "photos", "bird.png"), img, 0o644)
	row := func(name string) string {
		return fmt.Sprintf(`{"messages": [{"role": "user", "content": [{"type": "image", "image": %q}, {"type": "text", "text": "What bird?"}]}, {"role": "assistant", "content": "A robin."}]}`, name)
	}
	for _, bad := range []string{"../" + filepath.Base(outside) + "/secret.png", filepath.Join(outside, "secret.png"),
		"link.png", "linkdir/bird.png", "photos/../../x/secret.png", "inner/../../secret.png"} {
		dir := filepath.Join(t.TempDir(), "data")
		os.MkdirAll(filepath.Join(dir, "photos"), 0o755)
		os.WriteFile(filepath.Join(dir, "photos", "bird.png"), img, 0o644)
		os.Symlink(filepath.Join(outside, "secret.png"), filepath.Join(dir, "link.png"))
		os.Symlink(filepath.Join(outside, "photos"), filepath.Join(dir, "linkdir"))
		os.Symlink(filepath.Join(dir, "photos", "bird.png"), filepath.Join(dir, "inner.png")) // inside: allowed
		os.WriteFile(filepath.Join(dir, "train.jsonl"), []byte(row("inner.png")+"\n"+row(bad)+"\n"), 0o644)
		folders = append(folders, dir)
	}
	return outside, folders
}

// TestMediaStaysInsideTheFolder: every row whose media point outside the
// data folder is refused naming train.jsonl:2, and no error quotes the
// file; under strace (when installed), nothing outside is opened.
func TestMediaStaysInsideTheFolder(t *testing.T) {
	enc, _ := mediaEncoder(t, train.SFT)
	enc.Dir = ""
	outside, folders := outsideFolders(t)
	for _, dir := range folders {
		_, err := LoadFolder(context.Background(), dir, enc)
		var le *LineError
		if !errors.As(err, &le) || !strings.Contains(err.Error(), "train.jsonl:2") || strings.Contains(err.Error(), "root:") {
			t.Errorf("%s: %v", dir, err)
			continue
		}
		t.Logf("refused: %v", err)
	}
	strace, err := exec.LookPath("strace")
	if err != nil {
		t.Skip("strace is not installed: the check that nothing outside is opened is skipped")
	}
	log := filepath.Join(t.TempDir(), "strace.log")
	cmd := exec.Command(strace, "-f", "-y", "-e", "trace=open,openat,openat2", "-o", log, os.Args[0], "-test.run=^TestMediaOutsideHelper$", "-test.count=1")
	cmd.Env = append(os.Environ(), outsideEnv+"="+strings.Join(folders, string(os.PathListSeparator)))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Skipf("strace cannot trace here (%v): %s", err, firstLine(out))
	}
	f, err := os.Open(log)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	opens := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if strings.Contains(sc.Text(), "open") {
			opens++
		}
		if strings.Contains(sc.Text(), outside) {
			t.Errorf("a file outside the data folders was opened: %s", sc.Text())
		}
	}
	if opens == 0 {
		t.Fatal("strace logged no open at all: the check proves nothing")
	}
	t.Logf("strace: %d opens, none outside the data folders", opens)
}

// TestMediaOutsideHelper loads the folders TestMediaStaysInsideTheFolder
// traces.
func TestMediaOutsideHelper(t *testing.T) {
	list := os.Getenv(outsideEnv)
	if list == "" {
		t.Skip("helper process for TestMediaStaysInsideTheFolder (runs only when that test starts it)")
	}
	enc, _ := mediaEncoder(t, train.SFT)
	for _, dir := range filepath.SplitList(list) {
		enc.Dir = ""
		LoadFolder(context.Background(), dir, enc) // the tracing test judges what was opened

	}
}

func firstLine(b []byte) string {
	s, _, _ := strings.Cut(string(b), "\n")
	return s
}

// TestMediaFIFORefused: a FIFO named as a row's image, inside the data
// folder, is refused at once with the row's file:line.
func TestMediaFIFORefused(t *testing.T) {
	enc, dir := mediaEncoder(t, train.SFT)
	if err := syscall.Mkfifo(filepath.Join(dir, "photos", "pipe.png"), 0o644); err != nil {
		t.Fatal(err)
	}
	line := `{"messages": [{"role": "user", "content": [{"type": "image", "image": "photos/pipe.png"}]}, {"role": "assistant", "content": "A robin."}]}`
	os.WriteFile(filepath.Join(dir, "train.jsonl"), []byte(line+"\n"), 0o644)
	enc.Dir = ""
	t0 := time.Now()
	_, err := LoadFolder(context.Background(), dir, enc)
	if err == nil || !strings.Contains(err.Error(), "train.jsonl:1") || !strings.Contains(err.Error(), "named pipe") || time.Since(t0) > time.Second {
		t.Errorf("err %v after %v", err, time.Since(t0))
	}
}
