package chat

import (
	"fmt"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"perch/ui"
	"perch/ui/look"
)

// addVersionSwitch adds ◀ n / m ▶ under an answer that has been
// regenerated: each version stays, and the one shown is the one the model
// sees from then on.
func (v *MessageView) addVersionSwitch(m ui.Message) {
	if m.Versions < 2 || v.Acts.useVersion == nil {
		return
	}
	cur := max(m.Version, 1)
	prev := widget.NewButtonWithIcon("", theme.NavigateBackIcon(), func() { v.Acts.useVersion(v.Msg, cur-1) })
	next := widget.NewButtonWithIcon("", theme.NavigateNextIcon(), func() { v.Acts.useVersion(v.Msg, cur+1) })
	for _, b := range []*widget.Button{prev, next} {
		b.Importance = widget.LowImportance
	}
	if cur <= 1 {
		prev.Disable()
	}
	if cur >= m.Versions {
		next.Disable()
	}
	v.Actions.Add(container.NewHBox(prev, container.NewCenter(look.Caption(fmt.Sprintf("%d / %d", cur, m.Versions))), next))
}

// fixButtons are what a failed answer offers: trying again, or for a chat
// that outgrew the model's context, leaving its oldest turns out or a
// fresh chat.
func (v *MessageView) fixButtons(m ui.Message) []fyne.CanvasObject {
	low := func(label string, icon fyne.Resource, f func()) *widget.Button {
		b := widget.NewButtonWithIcon(label, icon, f)
		b.Importance = widget.LowImportance
		return b
	}
	if m.ContextFull && v.Acts.allowTrim != nil {
		trim := low("Leave the oldest messages out", theme.ContentCutIcon(), func() { v.Acts.allowTrim(v.Msg) })
		trim.Importance = widget.HighImportance
		out := []fyne.CanvasObject{trim}
		if v.Acts.newChat != nil {
			out = append(out, low("New chat", theme.ContentAddIcon(), v.Acts.newChat))
		}
		return out
	}
	return []fyne.CanvasObject{low("Try again", theme.ViewRefreshIcon(), func() { v.Acts.regenerate(v.Msg) })}
}

// setMarker shows text as a quiet rule above the message ("" hides it).
func (v *MessageView) setMarker(text string) {
	if text == "" {
		v.Marker.Hide()
		return
	}
	if v.MarkerLine != text {
		line := func() fyne.CanvasObject {
			r := canvas.NewRectangle(look.ThemeColor(theme.ColorNameSeparator))
			r.SetMinSize(fyne.NewSize(24, 1))
			return container.NewVBox(layout.NewSpacer(), r, layout.NewSpacer())
		}
		t := look.Caption(text)
		t.TextStyle.Italic = true
		v.Marker.Objects = []fyne.CanvasObject{container.New(ruleLayout{}, line(), t, line())}
		v.MarkerLine = text
	}
	v.Marker.Show()
	v.Marker.Refresh()
}

// ruleLayout centres its middle object between two lines that fill the rest.
type ruleLayout struct{}

func (ruleLayout) Layout(objs []fyne.CanvasObject, size fyne.Size) {
	mid := objs[1].MinSize()
	pad := theme.Padding() * 2
	side := max(0, (size.Width-mid.Width)/2-pad)
	objs[0].Move(fyne.NewPos(0, 0))
	objs[0].Resize(fyne.NewSize(side, size.Height))
	objs[1].Move(fyne.NewPos(side+pad, (size.Height-mid.Height)/2))
	objs[1].Resize(mid)
	objs[2].Move(fyne.NewPos(size.Width-side, 0))
	objs[2].Resize(fyne.NewSize(side, size.Height))
}

func (ruleLayout) MinSize(objs []fyne.CanvasObject) fyne.Size {
	mid := objs[1].MinSize()
	return fyne.NewSize(mid.Width+4*theme.Padding(), mid.Height+2*theme.Padding())
}

// Marker texts.
const (
	MarkerMessages    = "Earlier messages are not in the model's view"
	markerAttachments = "Earlier attachments are not in the model's view"
)
