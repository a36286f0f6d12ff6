package window

import (
	"perch/ui"

	"fmt"

	"fyne.io/fyne/v2/widget"
)

// watchTraining labels the sidebar's Teach button with the run going on
// ("Teach · 45%"), so every page shows that one is (only the menubar did,
// where there is a menubar).
func (mw *MainWindow) watchTraining(b *widget.Button) {
	mw.env.teacher.Watch(func(u ui.TrainUpdate) {
		label := teachNavLabel(u.Run)
		mw.env.do(func() {
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
