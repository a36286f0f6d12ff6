package ui

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// Tooltips for icon buttons (Fyne has none): a hint drawn under the button
// while the pointer is on it, in a layer above the window's content that
// takes no input, so the pointer still reaches what lies below.

// tips is a window's tooltip layer.
type tips struct {
	layer *fyne.Container
}

func newTips() *tips { return &tips{layer: container.New(tipLayout{})} }

// show draws text under o.
func (t *tips) show(o fyne.CanvasObject, text string) {
	if t == nil || text == "" {
		return
	}
	label := canvas.NewText(text, theme.Color(theme.ColorNameForeground))
	label.TextSize = theme.Size(theme.SizeNameCaptionText)
	bg := canvas.NewRectangle(themeColor(colorCard))
	bg.CornerRadius = 6
	bg.StrokeColor = themeColor(theme.ColorNameSeparator)
	bg.StrokeWidth = 1
	bubble := container.NewStack(bg, container.NewPadded(label))
	size := bubble.MinSize()
	at := fyne.CurrentApp().Driver().AbsolutePositionForObject(o)
	x := min(at.X, t.layer.Size().Width-size.Width-4) // inside the window
	bubble.Resize(size)
	bubble.Move(fyne.NewPos(max(x, 4), at.Y+o.Size().Height+2))
	t.layer.Objects = []fyne.CanvasObject{bubble}
	t.layer.Refresh()
}

func (t *tips) hide() {
	if t == nil || len(t.layer.Objects) == 0 {
		return
	}
	t.layer.Objects = nil
	t.layer.Refresh()
}

// shown is the tooltip's text ("" none).
func (t *tips) shown() string {
	if t == nil || len(t.layer.Objects) == 0 {
		return ""
	}
	return t.layer.Objects[0].(*fyne.Container).Objects[1].(*fyne.Container).Objects[0].(*canvas.Text).Text
}

// tipLayout places nothing and asks for no room: a tooltip is placed by
// show, and never makes the window larger.
type tipLayout struct{}

func (tipLayout) Layout([]fyne.CanvasObject, fyne.Size) {}
func (tipLayout) MinSize([]fyne.CanvasObject) fyne.Size { return fyne.Size{} }

// tipButton is a low-importance button with a tooltip.
type tipButton struct {
	widget.Button
	tip  string
	tips *tips
}

func newTipButton(label string, icon fyne.Resource, tip string, t *tips, f func()) *tipButton {
	b := &tipButton{tip: tip, tips: t}
	b.Text, b.Icon, b.OnTapped = label, icon, f
	b.Importance = widget.LowImportance
	b.ExtendBaseWidget(b)
	return b
}

// MouseIn implements desktop.Hoverable.
func (b *tipButton) MouseIn(e *desktop.MouseEvent) {
	b.Button.MouseIn(e)
	b.tips.show(b, b.tip)
}

// MouseOut implements desktop.Hoverable.
func (b *tipButton) MouseOut() {
	b.Button.MouseOut()
	b.tips.hide()
}

// Tapped implements fyne.Tappable: the tip goes as the button acts.
func (b *tipButton) Tapped(e *fyne.PointEvent) {
	b.tips.hide()
	b.Button.Tapped(e)
}
