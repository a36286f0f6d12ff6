package window

import (
	"fmt"

	"fyne.io/fyne/v2/widget"

	"perch/ui"
	"perch/ui/teach"
)

// watchTraining labels the sidebar's Teach button with the run going on
// ("Teach · 45%"), so every page shows that one is (only the menubar did,
// where there is a menubar).
func (mw *MainWindow) watchTraining(b *widget.Button) {
	mw.env.Teacher.Watch(func(u ui.TrainUpdate) {
		label := teachNavLabel(u.Run)
		mw.env.Do(func() {
			if b.Text != label {
				b.SetText(label)
			}
		})
	})
}

// teachNavLabel is short: the sidebar must not widen for it.
func teachNavLabel(r ui.TrainRun) string {
	switch {
	case r.State == ui.RunPreparing:
		return "Teach · starting"
	case r.State == ui.RunPaused:
		return "Teach · paused"
	case r.State.Active() && r.Steps > 0:
		return fmt.Sprintf("Teach · %d%%", 100*r.Step/r.Steps)
	}
	return "Teach"
}

// ShowTeach opens the Teach page.
func (mw *MainWindow) ShowTeach() {
	if mw.env.Teacher == nil {
		return
	}
	if mw.teach == nil {
		mw.teach = teach.NewView(mw.env, mw.Window)
		mw.teach.Run.OnTry = func(id string) {
			mw.ShowConversation("")
			mw.UseAdapter(id)
		}
	}
	mw.teach.Reload()
	mw.teach.Scroll.ScrollToTop() // the page opens at its top, with the run going on
	mw.showPage("teach", mw.teach.Root)
}
