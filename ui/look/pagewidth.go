package look

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// What keeps the window the width the user gave it, and the wheel turning
// the page wherever the pointer is.

// PageScroll scrolls a page (Models, Settings, Teach) in both directions.
// A vertical-only scroll asks for its content's full width, and a page
// wider than the window made the window grow (745 → 809 px on opening
// Teach) and moved the sidebar's edge; this one asks for nothing, and a
// page narrower than its widgets scrolls sideways instead.
func PageScroll(content fyne.CanvasObject) *container.Scroll {
	return container.NewScroll(content)
}

// FieldEntry is a one-line form field that lets the mouse wheel through
// to the page: an entry's own scroller takes every wheel event over it,
// even one it cannot use, so a page full of fields stopped scrolling
// wherever the pointer met one. Fields of a few characters need no scroller.
func FieldEntry() *widget.Entry {
	e := widget.NewEntry()
	e.Wrapping = fyne.TextWrapOff
	e.Scroll = container.ScrollNone
	return e
}

// FooterLayout puts a message's buttons at the left and its stats line at
// the right, dropping the stats when the row is too narrow for both: the
// stats never make the chat, and the window, wider.
type FooterLayout struct{}

func (FooterLayout) Layout(objs []fyne.CanvasObject, size fyne.Size) {
	actions, stats := objs[0], objs[1]
	aw := actions.MinSize().Width
	actions.Move(fyne.NewPos(0, 0))
	actions.Resize(fyne.NewSize(aw, size.Height))
	sm := stats.MinSize()
	if aw+sm.Width+theme.Padding() > size.Width {
		stats.Resize(fyne.NewSize(0, 0))
		return
	}
	stats.Move(fyne.NewPos(size.Width-sm.Width, (size.Height-sm.Height)/2))
	stats.Resize(sm)
}

func (FooterLayout) MinSize(objs []fyne.CanvasObject) fyne.Size {
	a, s := objs[0].MinSize(), objs[1].MinSize()
	return fyne.NewSize(a.Width, max(a.Height, s.Height))
}
