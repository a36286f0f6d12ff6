//go:build screenshots

package shots

import (
	"fmt"
	"os"
	"os/exec"
	"time"

	"fyne.io/fyne/v2"

	"perch/app/hub"
	"perch/ui/chat"
)

// moreShots captures what a user meets past the first answer: a chat that
// outgrew the model's context (its marker), a download without a network
// (its error in words, the window as wide as before), and the quick-ask
// popup opened by the perch quick-ask command, with no tray to click. It
// reports whether every step happened.
func (g *gui) moreShots(s scriptSteps) bool {
	mw := g.ui.Main
	// A long chat: short questions until the newest answer's model no
	// longer sees the first ones (run with a small -context). The base
	// model answers: an adapter the Teach story switched on for new chats
	// may answer in a word, and the chat would take many more turns.
	fyne.DoAndWait(func() { mw.ShowConversation(""); mw.UseAdapter("") })
	const maxTurns = 10
	marker, turns := "", 0
	for turn := 1; turn <= maxTurns && marker == ""; turn++ {
		turns = turn
		var busy bool
		fyne.DoAndWait(func() {
			mw.SetDraft(fmt.Sprintf("Tell me more, part %d.", turn))
			mw.Submit()
			busy = mw.Busy()
		})
		if !busy || !s.wait("answer "+fmt.Sprint(turn), func() bool { return !mw.Busy() }) {
			s.fail("the long chat stopped at turn %d", turn)
			return false
		}
		fyne.DoAndWait(func() { marker = mw.ContextMarker() })
	}
	if marker == "" {
		s.fail("%d turns in a small context showed no context marker", maxTurns)
		return false
	}
	fmt.Printf("perch: context marker after %d turns: %q\n", turns, marker)
	s.shoot(mw.Window, "context-marker.png")

	// A download with no network (the run's HF_ENDPOINT answers nothing).
	id := hub.DefaultModel().Repo
	var before fyne.Size
	fyne.DoAndWait(func() { before = mw.Size(); mw.Download(id) })
	var problem string
	if !s.wait("the offline download's error", func() bool { problem = mw.DownloadProblem(id); return problem != "" }) {
		return false
	}
	time.Sleep(300 * time.Millisecond) // a frame or two for the window to react
	var after, needs fyne.Size
	fyne.DoAndWait(func() { after, needs = mw.Size(), mw.Needs() })
	if after.Width != before.Width || needs.Width > before.Width {
		s.fail("the offline download error widened the window: %.0f px before, %.0f after (the page asks %.0f)",
			before.Width, after.Width, needs.Width)
		return false
	}
	fmt.Printf("perch: offline download: %q; window %.0f px wide before and after\n", problem, before.Width)
	s.shoot(mw.Window, "download-offline.png")
	fyne.DoAndWait(mw.ShowChat)

	// perch quick-ask, as a desktop shortcut would run it.
	if g.trayOK {
		fmt.Println("perch: note: a tray host is present; the quick-ask command is shown anyway")
	} else {
		fmt.Println("perch: no tray host: quick-ask comes from the perch quick-ask command")
	}
	exe, err := os.Executable()
	if err == nil {
		var out []byte
		out, err = exec.Command(exe, "quick-ask", "-data-dir", g.dataDir).CombinedOutput()
		if err != nil {
			err = fmt.Errorf("%v: %s", err, out)
		}
	}
	if err != nil {
		s.fail("perch quick-ask: %v", err)
		return false
	}
	var q *chat.QuickAsk
	if !s.wait("the popup from perch quick-ask", func() bool { q = g.ui.QuickAsk(); return q.Visible() }) {
		return false
	}
	fyne.DoAndWait(func() { q.SetDraft("Opened with: perch quick-ask") })
	s.shoot(q.Window, "quickask-command.png")
	fyne.DoAndWait(q.Hide)
	return true
}
