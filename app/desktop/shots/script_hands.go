//go:build screenshots

package shots

import (
	"fmt"
	"os/exec"
	"strings"
	"time"

	"fyne.io/fyne/v2"
)

// handsShots are the pictures of what a newcomer's hands meet (make
// screenshot): text typed on the real keyboard (xdotool, through the X
// server) right after pressing an answer's pencil, a long chat reopened
// from the sidebar, and the window at 600×500 on the chat and on Teach,
// which must keep one width. It reports whether every step happened.
func (g *gui) handsShots(s scriptSteps) bool {
	mw := g.ui.Main
	do := fyne.DoAndWait
	do(mw.ShowChat)

	// The pencil, then Ctrl+A and typing, with no click between.
	var err error
	do(func() { err = mw.PressCorrectLast() })
	if err != nil {
		s.fail("hands: %v", err)
		return false
	}
	time.Sleep(300 * time.Millisecond) // a frame draws the box
	const typed = "A better answer, typed right after the pencil"
	if err := xkeys("key", "--clearmodifiers", "ctrl+a"); err != nil {
		s.fail("hands: %v", err)
		return false
	}
	if err := xkeys("type", "--delay", "20", typed); err != nil {
		s.fail("hands: %v", err)
		return false
	}
	var text string
	var focused bool
	if !s.wait("the typing to land in the correction box", func() bool {
		text, focused, err = mw.CorrectionDraft()
		return err == nil && text == typed
	}) {
		s.fail("hands: the correction box holds %q (has the keyboard: %v; %v)", text, focused, err)
		return false
	}
	s.shoot(mw.Window, "correction-typed.png")
	do(mw.CancelCorrection)

	// The long chat reopened from the sidebar, after a blank one.
	var titles []string
	do(func() { titles = mw.ChatTitles() })
	long := ""
	for _, t := range titles {
		if strings.HasPrefix(t, "Tell me more") {
			long = t
		}
	}
	if long == "" {
		s.fail("hands: no long chat in the sidebar (%q)", titles)
		return false
	}
	do(func() { mw.ShowConversation(""); mw.ShowSettings() })
	do(func() { err = mw.OpenFromSidebar(long) })
	if err != nil {
		s.fail("hands: %v", err)
		return false
	}
	s.shoot(mw.Window, "chat-reopened.png")
	var latest bool
	do(func() { latest = mw.LatestInView() })
	if !latest {
		s.fail("hands: %q reopened without its latest message in view", long)
		return false
	}

	// 600×500 on the chat and on Teach: one width, one sidebar.
	small := fyne.NewSize(600, 500)
	do(func() { mw.Window.Resize(small) })
	time.Sleep(300 * time.Millisecond)
	var chatSize, teachSize fyne.Size
	var chatSide, teachSide float32
	do(func() { chatSize, chatSide = mw.Size(), mw.SidebarWidth() })
	s.shoot(mw.Window, "small-main.png")
	do(mw.ShowTeach)
	time.Sleep(300 * time.Millisecond)
	do(func() { teachSize, teachSide = mw.Size(), mw.SidebarWidth() })
	s.shoot(mw.Window, "small-teach.png")
	fmt.Printf("perch: at 600×500: chat %.0f×%.0f (sidebar %.0f), Teach %.0f×%.0f (sidebar %.0f)\n",
		chatSize.Width, chatSize.Height, chatSide, teachSize.Width, teachSize.Height, teachSide)
	if chatSize.Width != teachSize.Width || chatSide != teachSide {
		s.fail("hands: opening Teach at 600×500 changed the window (%.0f → %.0f px) or the sidebar (%.0f → %.0f px)",
			chatSize.Width, teachSize.Width, chatSide, teachSide)
		return false
	}
	do(mw.ShowChat)
	return true
}

// xkeys runs xdotool against the X server's focused window: keys as a
// keyboard sends them, not calls into the widgets.
func xkeys(args ...string) error {
	out, err := exec.Command("xdotool", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("xdotool %s: %v: %s (make deps installs xdotool)", strings.Join(args, " "), err, out)
	}
	return nil
}
