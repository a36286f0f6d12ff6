package window

import "fyne.io/fyne/v2"

// What scripted runs (make screenshot) do as a person would: the same
// paths as the buttons, and what they need to check. UI goroutine only.

// Download presses a model's Download button on the models page.
func (mw *MainWindow) Download(id string) {
	mw.ShowModels()
	if r, ok := mw.models.Rows[id]; ok {
		r.Start()
	}
}

// DownloadProblem is what a model's card says went wrong with its
// download ("" nothing).
func (mw *MainWindow) DownloadProblem(id string) string {
	if mw.models == nil {
		return ""
	}
	if r, ok := mw.models.Rows[id]; ok && r.Problem.Root.Visible() {
		return r.Problem.Summary.Text
	}
	return ""
}

// Size is the window's size, and Needs the size its content asks for (a
// page that needed more would make the window grow).
func (mw *MainWindow) Size() fyne.Size  { return mw.Window.Canvas().Size() }
func (mw *MainWindow) Needs() fyne.Size { return mw.Window.Content().MinSize() }

// ContextMarker is the marker the chat shows ("" none), after scrolling it
// into view.
func (mw *MainWindow) ContextMarker() string {
	v := mw.chat
	for _, mv := range v.Views {
		if mv.Marker.Visible() {
			y := mv.Root.Position().Y
			v.Scroll.ScrollToOffset(fyne.NewPos(0, max(0, y-8)))
			return mv.MarkerLine
		}
	}
	return ""
}

// ShowChat goes back to the chat, as "Back to chat" does.
func (mw *MainWindow) ShowChat() { mw.showChat() }
