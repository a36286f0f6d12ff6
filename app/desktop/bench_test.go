package desktop

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"perch/app/internal/xvfb"
)

// BenchmarkStartupToWindow measures launching Perch (no model loaded) until
// its window is up and takes input (the app prints "perch: ready" from the
// UI goroutine one frame after the event loop starts). A first launch in a
// fresh home (font cache and history to create) is reported apart as
// ms/first-window; the timed launches reuse that home, as every launch after
// the first does. Target: under 0.5 s.
func BenchmarkStartupToWindow(b *testing.B) {
	bin, display := guiBenchSetup(b)
	home := b.TempDir()
	start := time.Now()
	startApp(b, bin, display, home, "-ready-probe").stop()
	first := time.Since(start)
	var total time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		p := startApp(b, bin, display, home, "-ready-probe")
		total += time.Since(start)
		b.StopTimer()
		p.stop()
		b.StartTimer()
	}
	b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "ms/window")
	b.ReportMetric(float64(first.Milliseconds()), "ms/first-window")
}

// BenchmarkIdleCPU measures the CPU an idle Perch uses (a model chosen but
// not loaded, the chat shown, nothing streaming) over 5 s, side by side with a bare Fyne window of the
// same size holding one focused entry (the floor: what Fyne itself costs),
// in three states: the window shown with the keyboard focus (the
// composer's cursor blinks), shown with the focus elsewhere, and hidden
// (unmapped, as a window closed to the menubar is).
// Software GL under Xvfb, so these are upper bounds.
func BenchmarkIdleCPU(b *testing.B) {
	if runtime.GOOS != "linux" {
		b.Skip("reads /proc; runs on Linux")
	}
	bin, display := guiBenchSetup(b)
	tinyModel, _ := filepath.Abs(filepath.Join("..", "..", "testdata", "models", "text-tiny"))
	bare := filepath.Join(b.TempDir(), "barewindow")
	if out, err := exec.Command("go", "build", "-o", bare, "./testdata/barewindow").CombinedOutput(); err != nil {
		b.Fatalf("go build barewindow: %v\n%s", err, out)
	}
	if _, err := exec.LookPath("xdotool"); err != nil {
		b.Skip("xdotool is not installed (make deps installs it)")
	}
	for _, app := range []struct{ name, bin, title string }{{"perch", bin, "Perch"}, {"bare-fyne", bare, "Bare Fyne window"}} {
		for _, state := range []string{"focused", "unfocused", "hidden"} {
			b.Run(app.name+"/"+state, func(b *testing.B) {
				var used time.Duration
				for i := 0; i < b.N; i++ {
					var p *benchApp
					if app.name == "perch" {
						// A model chosen (not loaded) so the chat and its composer show.
						p = startApp(b, app.bin, display, b.TempDir(), "-ready-probe", "-model", tinyModel)
					} else {
						p = startCmd(b, exec.Command(app.bin), display, b.TempDir())
					}
					time.Sleep(time.Second) // let start-up work finish
					focusFor(b, display, app.title, state)
					time.Sleep(time.Second)
					before := cpuTime(b, p.cmd.Process.Pid)
					time.Sleep(5 * time.Second)
					used += cpuTime(b, p.cmd.Process.Pid) - before
					p.stop()
				}
				ms := float64(used.Milliseconds()) / float64(b.N)
				b.ReportMetric(ms, "cpu-ms/5s")
				b.ReportMetric(ms/50, "%cpu")
			})
		}
	}
}

// focusFor gives the keyboard focus to the app's window (focused) or to
// the screen's root window (unfocused), or unmaps the window (hidden: how
// a window closed to the menubar stands, for both apps alike).
func focusFor(b *testing.B, display, title, state string) {
	find := []string{"search", "--sync", "--name", "^" + title + "$"}
	switch state {
	case "focused":
		xdo(b, display, append(find, "windowfocus", "--sync")...)
	case "unfocused":
		xdo(b, display, append(find, "windowfocus", "--sync")...)
		out, _ := exec.Command("xwininfo", "-root", "-display", display).Output()
		for _, f := range strings.Fields(string(out)) {
			if strings.HasPrefix(f, "0x") {
				xdo(b, display, "windowfocus", f)
				break
			}
		}
	case "hidden":
		xdo(b, display, append(find, "windowunmap", "--sync")...)
	}
}

func xdo(b *testing.B, display string, args ...string) string {
	cmd := exec.Command("xdotool", args...)
	cmd.Env = append(os.Environ(), "DISPLAY="+display)
	out, err := cmd.CombinedOutput()
	if err != nil {
		b.Logf("xdotool %v: %v %s", args, err, out)
	}
	return string(out)
}

func guiBenchSetup(b *testing.B) (bin, display string) {
	display = xvfb.Start(b, "1280x900x24")
	bin = filepath.Join(b.TempDir(), "perch")
	if out, err := exec.Command("go", "build", "-o", bin, "perch/app").CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	return bin, display
}

type benchApp struct {
	cmd *exec.Cmd
}

// startApp runs the app and waits for its ready line.
func startApp(b *testing.B, bin, display, home string, args ...string) *benchApp {
	return startCmd(b, exec.Command(bin, append([]string{"gui", "-data-dir", filepath.Join(home, "data")}, args...)...), display, home)
}

// startCmd runs cmd on display in a fresh home and waits for its ready line.
func startCmd(b *testing.B, cmd *exec.Cmd, display, home string) *benchApp {
	cmd.Env = append(os.Environ(), "DISPLAY="+display, "HOME="+home, "XDG_CONFIG_HOME="+home+"/.config",
		"XDG_CACHE_HOME="+home+"/.cache", "DBUS_SESSION_BUS_ADDRESS=", "LANG=en_US.UTF-8")
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	ready := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "perch: ready") {
				ready <- true
			}
		}
		close(ready)
	}()
	select {
	case ok := <-ready:
		if !ok {
			cmd.Wait()
			b.Fatal(cmd.Path + " exited before its window was ready")
		}
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		b.Fatal(cmd.Path + " window not ready after 30 s")
	}
	return &benchApp{cmd: cmd}
}

func (a *benchApp) stop() {
	a.cmd.Process.Kill()
	a.cmd.Wait()
}

// cpuTime is the process's user+system CPU time from /proc/PID/stat.
func cpuTime(b *testing.B, pid int) time.Duration {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatal(err)
	}
	s := string(data)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+2:]) // after "pid (comm) "
	utime, _ := strconv.ParseInt(fields[11], 10, 64)
	stime, _ := strconv.ParseInt(fields[12], 10, 64)
	return time.Duration(utime+stime) * time.Second / 100 // USER_HZ is 100 on Linux
}
