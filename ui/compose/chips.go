package compose

import (
	"fmt"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"perch/ui"
	"perch/ui/look"
)

// Chip shows one attachment: a thumbnail or icon, its name, a detail line
// (duration, size) and, while composing, a remove button.
type Chip struct {
	widget.BaseWidget
	Att     ui.Attachment
	Remove  *widget.Button // nil in sent messages
	content fyne.CanvasObject
}

// CreateRenderer implements fyne.Widget.
func (c *Chip) CreateRenderer() fyne.WidgetRenderer { return widget.NewSimpleRenderer(c.content) }

const thumbSize = 44

func NewChip(a ui.Attachment, onRemove func()) *Chip {
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
	name := widget.NewLabel(look.Shorten(a.Name, 22))
	name.TextStyle.Bold = true
	info := container.New(&look.TightVBox{}, name, look.Caption(ChipDetail(a)))
	row := container.NewHBox(pic, info)
	c := &Chip{Att: a}
	if onRemove != nil {
		c.Remove = widget.NewButtonWithIcon("", theme.CancelIcon(), onRemove)
		c.Remove.Importance = widget.LowImportance
		row.Add(container.NewCenter(c.Remove))
	}
	bg := canvas.NewRectangle(look.ThemeColor(look.ColorCard))
	bg.CornerRadius = 10
	bg.StrokeColor = look.ThemeColor(theme.ColorNameSeparator)
	bg.StrokeWidth = 1
	c.content = container.NewStack(bg, container.NewPadded(row))
	c.ExtendBaseWidget(c)
	return c
}

func kindIcon(k ui.MediaKind) fyne.Resource {
	switch k {
	case ui.Image:
		return theme.MediaPhotoIcon()
	case ui.Audio:
		return theme.MediaMusicIcon()
	case ui.Video:
		return theme.MediaVideoIcon()
	}
	return theme.FileIcon()
}

// ChipDetail is the chip's second line: "Audio · 0:07", "Image · 1024×768".
func ChipDetail(a ui.Attachment) string {
	kind := map[ui.MediaKind]string{ui.Image: "Image", ui.Audio: "Audio", ui.Video: "Video"}[a.Kind]
	if kind == "" {
		kind = "File"
	}
	switch {
	case (a.Kind == ui.Audio || a.Kind == ui.Video) && a.Duration > 0:
		return kind + " · " + look.Clock(a.Duration)
	case a.Width > 0 && a.Height > 0:
		return fmt.Sprintf("%s · %d×%d", kind, a.Width, a.Height)
	case a.Size > 0:
		return kind + " · " + ui.ByteSize(a.Size)
	}
	return kind
}
