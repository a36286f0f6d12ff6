package look

import (
	"fmt"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// Clock formats a duration as m:ss.
func Clock(d time.Duration) string {
	s := int(d.Round(time.Second).Seconds())
	return fmt.Sprintf("%d:%02d", s/60, s%60)
}

func Shorten(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	keep := n - 1
	return string(r[:keep*2/3]) + "…" + string(r[len(r)-(keep-keep*2/3):])
}

// Clip cuts s to n runes, ending with "…" when cut.
func Clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// TightVBox stacks objects vertically with no padding.
type TightVBox struct{}

func (TightVBox) Layout(objs []fyne.CanvasObject, size fyne.Size) {
	y := (size.Height - TightVBox{}.MinSize(objs).Height) / 2
	for _, o := range objs {
		h := o.MinSize().Height
		o.Move(fyne.NewPos(0, y))
		o.Resize(fyne.NewSize(size.Width, h))
		y += h
	}
}

func (TightVBox) MinSize(objs []fyne.CanvasObject) fyne.Size {
	var s fyne.Size
	for _, o := range objs {
		m := o.MinSize()
		s.Width = max(s.Width, m.Width)
		s.Height += m.Height
	}
	return s
}

// MaxWidth centres its child at most width wide (and as tall as it needs at
// that width), so wrapped text reads as a column on a wide window.
type MaxWidth struct{ Width float32 }

func (l *MaxWidth) Layout(objs []fyne.CanvasObject, size fyne.Size) {
	w := min(size.Width, l.Width)
	for _, o := range objs {
		o.Resize(fyne.NewSize(w, o.MinSize().Height))
		h := min(o.MinSize().Height, size.Height) // wrapped text knows its height once it has a width
		o.Resize(fyne.NewSize(w, h))
		o.Move(fyne.NewPos((size.Width-w)/2, max(0, (size.Height-h)/2)))
	}
}

func (l *MaxWidth) MinSize(objs []fyne.CanvasObject) fyne.Size {
	var s fyne.Size
	for _, o := range objs {
		s = s.Max(o.MinSize())
	}
	return fyne.NewSize(min(s.Width, l.Width), s.Height)
}

func Heading(s string) fyne.CanvasObject {
	return widget.NewRichText(&widget.TextSegment{Text: s, Style: widget.RichTextStyleHeading})
}

func Section(title string, body fyne.CanvasObject) fyne.CanvasObject {
	t := widget.NewRichText(&widget.TextSegment{Text: title, Style: widget.RichTextStyleSubHeading})
	return container.NewVBox(t, body)
}

// Note is a wrapped line of small print under a setting.
func Note(text string) *widget.Label {
	l := widget.NewLabel(text)
	l.Wrapping = fyne.TextWrapWord
	l.Importance = widget.LowImportance
	return l
}

func Caption(s string) *canvas.Text {
	t := canvas.NewText(s, theme.Color(theme.ColorNamePlaceHolder))
	t.TextSize = theme.Size(theme.SizeNameCaptionText)
	return t
}

// ETA says how long is left ("about 12 min left").
func ETA(d time.Duration) string {
	switch {
	case d < time.Minute:
		return "less than a minute left"
	case d < time.Hour:
		return fmt.Sprintf("about %d min left", int(d.Round(time.Minute).Minutes()))
	}
	return fmt.Sprintf("about %.1f h left", d.Hours())
}
