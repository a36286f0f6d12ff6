//go:build screenshots

package shots

import (
	"fmt"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"fyne.io/fyne/v2"

	"perch/ui"
	"perch/ui/chat"
)

// script drives the app the way a person would, for `make screenshot` and
// for trying a model from the command line: attach files through the same
// path a drop takes, send a message, wait for the answer, capture the main
// window, the quick-ask popup, the models and settings pages, then quit.
// Any step that does not happen in time fails the run (exit status 1).
func (g *gui) script(f *flags) {
	deadline := time.Now().Add(f.timeout)
	failed := false
	fail := func(format string, args ...any) {
		fmt.Fprintf(os.Stderr, "perch: "+format+"\n", args...)
		failed = true
		g.SetExitCode(1)
		fyne.Do(g.app.Quit)
	}
	wait := func(what string, cond func() bool) bool {
		for time.Now().Before(deadline) {
			var ok bool
			fyne.DoAndWait(func() { ok = cond() })
			if ok {
				return true
			}
			time.Sleep(50 * time.Millisecond)
		}
		fail("%s did not happen within %s", what, f.timeout)
		return false
	}
	settle := func() { time.Sleep(400 * time.Millisecond) } // let a few frames render
	mw := g.ui.Main
	settle()

	if len(f.attach) > 0 {
		fyne.DoAndWait(func() { mw.Attach(f.attach...) })
		if !wait("attaching "+fmt.Sprint(f.attach), func() bool {
			return mw.PendingAttachments() == len(f.attach) || mw.Notice() != ""
		}) {
			return
		}
		var notice string
		fyne.DoAndWait(func() { notice = mw.Notice() })
		if notice != "" {
			fail("attachment refused: %s", notice)
			return
		}
	}
	if f.ask != "" {
		var notice string
		var busy bool
		fyne.DoAndWait(func() { mw.SetDraft(f.ask); mw.Submit(); busy, notice = mw.Busy(), mw.Notice() })
		if !busy {
			fail("the message was not sent: %s", notice)
			return
		}
		if !wait("the answer", func() bool { return !mw.Busy() }) {
			return
		}
		var m ui.Message
		fyne.DoAndWait(func() { m, _ = mw.LastMessage() })
		if m.State != ui.Done || m.Text == "" {
			fail("the answer never arrived (state %q): %s", m.State, m.Err)
			return
		}
		fmt.Printf("perch: answer: %q\n", m.Text)
	}
	if f.screenshots == "" {
		return
	}
	if err := os.MkdirAll(f.screenshots, 0o755); err != nil {
		fail("%v", err)
		return
	}
	shoot := func(w fyne.Window, name string) {
		settle()
		var err error
		fyne.DoAndWait(func() { err = writePNG(w, filepath.Join(f.screenshots, name)) })
		if err != nil {
			fail("screenshot %s: %v", name, err)
		}
	}
	shoot(mw.Window, "main.png")

	if f.ask != "" {
		var q *chat.QuickAsk
		fyne.DoAndWait(func() {
			q = g.ui.QuickAsk()
			q.Show()
			q.SetDraft("What can you help me with?")
			q.Submit()
		})
		if !wait("the quick-ask answer", func() bool { return !q.Busy() }) {
			return
		}
		var m ui.Message
		fyne.DoAndWait(func() { m, _ = q.Answer() })
		if m.State != ui.Done || m.Text == "" {
			fail("the quick-ask answer never arrived (state %q): %s", m.State, m.Err)
			return
		}
		shoot(q.Window, "quickask.png")
		fyne.DoAndWait(q.Hide)
	}
	fyne.DoAndWait(mw.ShowModels)
	shoot(mw.Window, "models.png")
	fyne.DoAndWait(mw.ShowSettings)
	shoot(mw.Window, "settings.png")
	if f.teachDemo && !failed && !g.teachDemo(scriptSteps{wait, shoot, fail}) {
		return
	}
	if f.ask != "" && !failed && !g.moreShots(scriptSteps{wait, shoot, fail}) {
		return
	}
	if f.teachDemo && f.ask != "" && !failed && !g.handsShots(scriptSteps{wait, shoot, fail}) {
		return
	}
	if f.ask != "" && !failed && !g.toolsShots(scriptSteps{wait, shoot, fail}) {
		return
	}
	if !failed {
		fmt.Printf("perch: screenshots in %s\n", f.screenshots)
		fyne.Do(g.app.Quit)
	}
}

// writePNG saves the window's picture. Under Xvfb, reading back the GL
// front buffer gives black, so a blank capture falls back to asking the X
// server (ImageMagick's import) for the window by its title.
func writePNG(w fyne.Window, path string) error {
	img := w.Canvas().Capture()
	if img == nil || img.Bounds().Dx() == 0 || blank(img) {
		if os.Getenv("DISPLAY") != "" {
			if _, err := exec.LookPath("import"); err == nil {
				out, err := exec.Command("import", "-window", w.Title(), path).CombinedOutput()
				if err != nil {
					return fmt.Errorf("import -window %q: %v: %s", w.Title(), err, out)
				}
				return nil
			}
		}
		return fmt.Errorf("the window %q has no picture (is it shown?)", w.Title())
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := png.Encode(f, img); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// blank reports whether every sampled pixel is black or transparent.
func blank(img image.Image) bool {
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y += 7 {
		for x := b.Min.X; x < b.Max.X; x += 7 {
			if r, g, bl, _ := img.At(x, y).RGBA(); r|g|bl != 0 {
				return false
			}
		}
	}
	return true
}
