//go:build unix

package platform

import (
	"errors"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestOneInstancePerDataFolder(t *testing.T) {
	dir := t.TempDir()
	first, err := ClaimInstance(dir)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 4)
	first.Serve(func(cmd string) { got <- cmd })
	// A second launch finds the first and hands it its wish.
	if _, err := ClaimInstance(dir); !errors.Is(err, ErrRunning) {
		t.Fatalf("second claim: %v", err)
	}
	for _, cmd := range []string{CmdShow, CmdQuickAsk} {
		if err := AskInstance(dir, cmd); err != nil {
			t.Fatal(err)
		}
		if c := <-got; c != cmd {
			t.Fatalf("the first instance got %q, want %q", c, cmd)
		}
	}
	// Anything else is refused without reaching the app.
	c, err := net.Dial("unix", socketPath(dir))
	if err != nil {
		t.Fatal(err)
	}
	c.Write([]byte(strings.Repeat("x", 200) + "\n"))
	buf := make([]byte, 64)
	n, _ := c.Read(buf)
	c.Close()
	if !strings.HasPrefix(string(buf[:n]), "unknown command") || len(got) != 0 {
		t.Fatalf("junk got %q", buf[:n])
	}
	// Once it quits, the folder is free again and nobody answers.
	first.Close()
	again, err := ClaimInstance(dir)
	if err != nil {
		t.Fatalf("after the first quit: %v", err)
	}
	again.Close()
	start := time.Now()
	if err := AskInstance(dir, CmdShow); err == nil || time.Since(start) > 8*time.Second {
		t.Fatalf("asking nobody: %v after %v", err, time.Since(start))
	}
	// Deep folders get a socket in the temp folder (Unix sockets take ~100 bytes).
	deep := filepath.Join(dir, strings.Repeat("long-folder-name/", 8))
	if p := socketPath(deep); len(p) >= 100 || !strings.HasPrefix(filepath.Base(p), "perch-") {
		t.Fatalf("socket for a deep folder: %s", p)
	}
	in, err := ClaimInstance(deep)
	if err != nil {
		t.Fatal(err)
	}
	in.Serve(func(string) {})
	defer in.Close()
	if err := AskInstance(deep, CmdShow); err != nil {
		t.Fatal(err)
	}
}
