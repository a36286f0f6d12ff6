// Package xvfb starts a private X server for tests that need a display.
package xvfb

import (
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"
)

// Start runs a private X server (screen WxHxD) until the test ends and
// returns its display, or skips where Xvfb is not installed.
func Start(tb testing.TB, screen string) string {
	tb.Helper()
	if _, err := exec.LookPath("Xvfb"); err != nil {
		tb.Skip("Xvfb is not installed (make deps installs it)")
	}
	n := 70
	for ; n < 240; n++ {
		if _, err := os.Stat(fmt.Sprintf("/tmp/.X11-unix/X%d", n)); os.IsNotExist(err) {
			if _, err := os.Stat(fmt.Sprintf("/tmp/.X%d-lock", n)); os.IsNotExist(err) {
				break
			}
		}
	}
	display := fmt.Sprintf(":%d", n)
	// -noreset: the server stays as it is when its last client leaves.
	x := exec.Command("Xvfb", display, "-screen", "0", screen, "-nolisten", "tcp", "-noreset")
	if err := x.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { x.Process.Kill(); x.Wait() })
	for i := 0; ; i++ {
		if _, err := os.Stat(fmt.Sprintf("/tmp/.X11-unix/X%d", n)); err == nil {
			return display
		}
		if i > 100 {
			tb.Fatal("Xvfb did not start")
		}
		time.Sleep(50 * time.Millisecond)
	}
}
