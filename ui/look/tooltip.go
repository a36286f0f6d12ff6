package look

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

// Tips is a window's tooltip layer.
type Tips struct {
	Layer *fyne.Container
}

func NewTips() *Tips { return &Tips{Layer: container.New(tipLayout{})} }

// show draws text under o.
func (t *Tips) show(o fyne.CanvasObject, text string) {
	if t == nil || text == "" {
		return
	}
	label := canvas.NewText(text, theme.Color(theme.ColorNameForeground))
	label.TextSize = theme.Size(theme.SizeNameCaptionText)
	bg := canvas.NewRectangle(ThemeColor(ColorCard))
	bg.CornerRadius = 6
	bg.StrokeColor = ThemeColor(theme.ColorNameSeparator)
	bg.StrokeWidth = 1
	bubble := container.NewStack(bg, container.NewPadded(label))
	size := bubble.MinSize()
	at := fyne.CurrentApp().Driver().AbsolutePositionForObject(o)
	x := min(at.X, t.Layer.Size().Width-size.Width-4) // inside the window
	bubble.Resize(size)
	bubble.Move(fyne.NewPos(max(x, 4), at.Y+o.Size().Height+2))
	t.Layer.Objects = []fyne.CanvasObject{bubble}
	t.Layer.Refresh()
}

func (t *Tips) hide() {
	if t == nil || len(t.Layer.Objects) == 0 {
		return
	}
	t.Layer.Objects = nil
	t.Layer.Refresh()
}

// Shown is the tooltip's text ("" none).
func (t *Tips) Shown() string {
	if t == nil || len(t.Layer.Objects) == 0 {
		return ""
	}
	return t.Layer.Objects[0].(*fyne.Container).Objects[1].(*fyne.Container).Objects[0].(*canvas.Text).Text
}

// tipLayout places nothing and asks for no room: a tooltip is placed by
// show, and never makes the window larger.
type tipLayout struct{}

func (tipLayout) Layout([]fyne.CanvasObject, fyne.Size) {}
func (tipLayout) MinSize([]fyne.CanvasObject) fyne.Size { return fyne.Size{} }

// TipButton is a low-importance button with a tooltip.
type TipButton struct {
	widget.Button
	Tip  string
	tips *Tips
}

func NewTipButton(label string, icon fyne.Resource, tip string, t *Tips, f func()) *TipButton {
	b := &TipButton{Tip: tip, tips: t}
	b.Text, b.Icon, b.OnTapped = label, icon, f
	b.Importance = widget.LowImportance
	b.ExtendBaseWidget(b)
	return b
}

// MouseIn implements desktop.Hoverable.
func (b *TipButton) MouseIn(e *desktop.MouseEvent) {
	b.Button.MouseIn(e)
	b.tips.show(b, b.Tip)
}

// MouseOut implements desktop.Hoverable.
func (b *TipButton) MouseOut() {
	b.Button.MouseOut()
	b.tips.hide()
}

// Tapped implements fyne.Tappable: the tip goes as the button acts.
func (b *TipButton) Tapped(e *fyne.PointEvent) {
	b.tips.hide()
	b.Button.Tapped(e)
}
