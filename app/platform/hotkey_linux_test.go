package platform

import (
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"perch/app/internal/xvfb"
)

// The default build takes the shortcut on X11: a press reaches Perch, a
// key another client holds is an error (not a crash), and Off lets it go.
func TestX11HotkeyGrabsPressesAndReportsATakenKey(t *testing.T) {
	display := xvfb.Start(t, "640x480x24")
	if _, err := exec.LookPath("xdotool"); err != nil {
		t.Skip("xdotool is not installed (make deps installs it)")
	}
	a := &Hotkey{display: display}
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
	b := &Hotkey{display: display}
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
	c := &Hotkey{display: ":239"}
	c.Set("Ctrl+Alt+Space", func() {}, func(err error) { done <- err })
	if err := <-done; err == nil {
		t.Fatal("a missing display was not reported")
	}
}
