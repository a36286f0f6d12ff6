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

// chip shows one attachment: a thumbnail or icon, its name, a detail line
// (duration, size) and, while composing, a remove button.
type chip struct {
	widget.BaseWidget
	att     Attachment
	remove  *widget.Button // nil in sent messages
	content fyne.CanvasObject
}

// CreateRenderer implements fyne.Widget.
func (c *chip) CreateRenderer() fyne.WidgetRenderer { return widget.NewSimpleRenderer(c.content) }

const thumbSize = 44

func newChip(a Attachment, onRemove func()) *chip {
	var pic fyne.CanvasObject
	if a.Thumb != nil {
		img := canvas.NewImageFromImage(a.Thumb)
		img.FillMode = canvas.ImageFillContain
		img.ScaleMode = canvas.ImageScaleSmooth
		img.CornerRadius = 6
		img.SetMinSize(fyne.NewSquareSize(thumbSize))
		pic = img
	} else {
		icon := widget.NewIcon(kindIcon(a.Kind))
		pic = container.NewGridWrap(fyne.NewSquareSize(thumbSize), container.NewCenter(icon))
	}
	name := widget.NewLabel(shorten(a.Name, 22))
	name.TextStyle.Bold = true
	info := container.New(&tightVBox{}, name, caption(chipDetail(a)))
	row := container.NewHBox(pic, info)
	c := &chip{att: a}
	if onRemove != nil {
		c.remove = widget.NewButtonWithIcon("", theme.CancelIcon(), onRemove)
		c.remove.Importance = widget.LowImportance
		row.Add(container.NewCenter(c.remove))
	}
	bg := canvas.NewRectangle(themeColor(colorCard))
	bg.CornerRadius = 10
	bg.StrokeColor = themeColor(theme.ColorNameSeparator)
	bg.StrokeWidth = 1
	c.content = container.NewStack(bg, container.NewPadded(row))
	c.ExtendBaseWidget(c)
	return c
}

func kindIcon(k MediaKind) fyne.Resource {
	switch k {
	case Image:
		return theme.MediaPhotoIcon()
	case Audio:
		return theme.MediaMusicIcon()
	case Video:
		return theme.MediaVideoIcon()
	}
	return theme.FileIcon()
}

// chipDetail is the chip's second line: "Audio · 0:07", "Image · 1024×768".
func chipDetail(a Attachment) string {
	kind := map[MediaKind]string{Image: "Image", Audio: "Audio", Video: "Video"}[a.Kind]
	if kind == "" {
		kind = "File"
	}
	switch {
	case (a.Kind == Audio || a.Kind == Video) && a.Duration > 0:
		return kind + " · " + clock(a.Duration)
	case a.Width > 0 && a.Height > 0:
		return fmt.Sprintf("%s · %d×%d", kind, a.Width, a.Height)
	case a.Size > 0:
		return kind + " · " + byteSize(a.Size)
	}
	return kind
}

// clock formats a duration as m:ss.
func clock(d time.Duration) string {
	s := int(d.Round(time.Second).Seconds())
	return fmt.Sprintf("%d:%02d", s/60, s%60)
}

func byteSize(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%d KB", n>>10)
	}
	return fmt.Sprintf("%d B", n)
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
