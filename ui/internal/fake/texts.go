package fake

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"
)

// Texts collects the text of every label, button and canvas text under o.
func Texts(o fyne.CanvasObject) []string {
	var out []string
	switch w := o.(type) {
	case *fyne.Container:
		for _, c := range w.Objects {
			out = append(out, Texts(c)...)
		}
	case *widget.Label:
		out = append(out, w.Text)
	case *widget.Button:
		out = append(out, w.Text)
	case *canvas.Text:
		out = append(out, w.Text)
	case *widget.Check:
		out = append(out, w.Text)
	case fyne.Widget:
		r := test.WidgetRenderer(w)
		for _, c := range r.Objects() {
			out = append(out, Texts(c)...)
		}
	}
	return out
}
