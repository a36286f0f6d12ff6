package ui

import (
	"fmt"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// clock formats a duration as m:ss.
func clock(d time.Duration) string {
	s := int(d.Round(time.Second).Seconds())
	return fmt.Sprintf("%d:%02d", s/60, s%60)
}

func shorten(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	keep := n - 1
	return string(r[:keep*2/3]) + "…" + string(r[len(r)-(keep-keep*2/3):])
}

// clip cuts s to n runes, ending with "…" when cut.
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// tightVBox stacks objects vertically with no padding.
type tightVBox struct{}

func (tightVBox) Layout(objs []fyne.CanvasObject, size fyne.Size) {
	y := (size.Height - tightVBox{}.MinSize(objs).Height) / 2
	for _, o := range objs {
		h := o.MinSize().Height
		o.Move(fyne.NewPos(0, y))
		o.Resize(fyne.NewSize(size.Width, h))
		y += h
	}
}

func (tightVBox) MinSize(objs []fyne.CanvasObject) fyne.Size {
	var s fyne.Size
	for _, o := range objs {
		m := o.MinSize()
		s.Width = max(s.Width, m.Width)
		s.Height += m.Height
	}
	return s
}

// maxWidth centres its child at most width wide (and as tall as it needs at
// that width), so wrapped text reads as a column on a wide window.
type maxWidth struct{ width float32 }

func (l *maxWidth) Layout(objs []fyne.CanvasObject, size fyne.Size) {
	w := min(size.Width, l.width)
	for _, o := range objs {
		o.Resize(fyne.NewSize(w, o.MinSize().Height))
		h := min(o.MinSize().Height, size.Height) // wrapped text knows its height once it has a width
		o.Resize(fyne.NewSize(w, h))
		o.Move(fyne.NewPos((size.Width-w)/2, max(0, (size.Height-h)/2)))
	}
}

func (l *maxWidth) MinSize(objs []fyne.CanvasObject) fyne.Size {
	var s fyne.Size
	for _, o := range objs {
		s = s.Max(o.MinSize())
	}
	return fyne.NewSize(min(s.Width, l.width), s.Height)
}

func heading(s string) fyne.CanvasObject {
	return widget.NewRichText(&widget.TextSegment{Text: s, Style: widget.RichTextStyleHeading})
}

func section(title string, body fyne.CanvasObject) fyne.CanvasObject {
	t := widget.NewRichText(&widget.TextSegment{Text: title, Style: widget.RichTextStyleSubHeading})
	return container.NewVBox(t, body)
}

// note is a wrapped line of small print under a setting.
func note(text string) *widget.Label {
	l := widget.NewLabel(text)
	l.Wrapping = fyne.TextWrapWord
	l.Importance = widget.LowImportance
	return l
}

func caption(s string) *canvas.Text {
	t := canvas.NewText(s, theme.Color(theme.ColorNamePlaceHolder))
	t.TextSize = theme.Size(theme.SizeNameCaptionText)
	return t
}
