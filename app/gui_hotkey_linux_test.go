package main

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// startXvfb runs a private X server for the test and returns its display,
// or skips (with the reason) where Xvfb is not installed.
func startXvfb(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("Xvfb"); err != nil {
		t.Skip("Xvfb is not installed (make deps installs it)")
	}
	n := 140
	for ; n < 240; n++ {
		if _, err := os.Stat(fmt.Sprintf("/tmp/.X11-unix/X%d", n)); os.IsNotExist(err) {
			if _, err := os.Stat(fmt.Sprintf("/tmp/.X%d-lock", n)); os.IsNotExist(err) {
				break
			}
		}
	}
	display := fmt.Sprintf(":%d", n)
	x := exec.Command("Xvfb", display, "-screen", "0", "640x480x24", "-nolisten", "tcp", "-noreset")
	if err := x.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { x.Process.Kill(); x.Wait() })
	for i := 0; ; i++ {
		if _, err := os.Stat(fmt.Sprintf("/tmp/.X11-unix/X%d", n)); err == nil {
			return display
		}
		if i > 100 {
			t.Fatal("Xvfb did not start")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// The default build takes the shortcut on X11: a press reaches Perch, a
// key another client holds is an error (not a crash), and Off lets it go.
func TestX11HotkeyGrabsPressesAndReportsATakenKey(t *testing.T) {
	display := startXvfb(t)
	if _, err := exec.LookPath("xdotool"); err != nil {
		t.Skip("xdotool is not installed (make deps installs it)")
	}
	a := &globalHotkey{display: display}
	pressed := make(chan struct{}, 8)
	done := make(chan error, 1)
	if err := a.Set("Ctrl+Alt+Space", func() { pressed <- struct{}{} }, func(err error) { done <- err }); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("grab: %v", err)
	}
	defer a.Off()
	key := exec.Command("xdotool", "key", "ctrl+alt+space")
	key.Env = append(os.Environ(), "DISPLAY="+display)
	if out, err := key.CombinedOutput(); err != nil {
		t.Fatalf("xdotool: %v %s", err, out)
	}
	select {
	case <-pressed:
	case <-time.After(5 * time.Second):
		t.Fatal("the press never arrived")
	}
	// Another app (here a second client) asking for the same key is refused.
	b := &globalHotkey{display: display}
	if err := b.Set("Ctrl+Alt+Space", func() {}, func(err error) { done <- err }); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err == nil || !strings.Contains(err.Error(), "taken by another app") {
		t.Fatalf("second grab: %v", err)
	}
	// Once the first lets go, the key is free.
	a.Off()
	if err := b.Set("Ctrl+Alt+Space", func() {}, func(err error) { done <- err }); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("after Off: %v", err)
	}
	b.Off()
	// No X display: a reason, not a panic.
	c := &globalHotkey{display: ":239"}
	c.Set("Ctrl+Alt+Space", func() {}, func(err error) { done <- err })
	if err := <-done; err == nil {
		t.Fatal("a missing display was not reported")
	}
}
