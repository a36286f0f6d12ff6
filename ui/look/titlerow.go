package look

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// TitleRow lays a truncating title out with what follows it (badges): the
// title takes its full width when there is room and is cut with "…" when
// there is not, so a long name (a folder's path) never widens the window
// and a short one is never cut.
type TitleRow struct{ title *widget.Label }

// NewTitleRow lays title out as the first of two objects.
func NewTitleRow(title *widget.Label) TitleRow { return TitleRow{title} }

// Natural is the width the title needs uncut: the text's width, its
// padding, and a little slack: the label's cutting measures the text rune
// by rune, which comes out a hair wider than the whole string, so a title
// given exactly its measured width was cut (every name read "Gemma-4 E…").
func (r TitleRow) Natural() float32 {
	t := r.title
	return fyne.MeasureText(t.Text, theme.TextSize(), t.TextStyle).Width + 2*theme.InnerPadding() + theme.Padding()
}

func (r TitleRow) Layout(objs []fyne.CanvasObject, size fyne.Size) {
	rest := objs[1].MinSize()
	w := max(0, min(r.Natural(), size.Width-rest.Width-theme.Padding()))
	objs[0].Move(fyne.NewPos(0, 0))
	objs[0].Resize(fyne.NewSize(w, size.Height))
	objs[1].Move(fyne.NewPos(w+theme.Padding(), (size.Height-rest.Height)/2))
	objs[1].Resize(rest)
}

func (r TitleRow) MinSize(objs []fyne.CanvasObject) fyne.Size {
	rest := objs[1].MinSize()
	t := objs[0].MinSize() // the ellipsis: the least a title needs
	return fyne.NewSize(t.Width+theme.Padding()+rest.Width, max(t.Height, rest.Height))
}
