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

// VisibleButton finds a visible button labelled text under o.
func VisibleButton(o fyne.CanvasObject, text string) *widget.Button {
	switch o := o.(type) {
	case *widget.Button:
		if o.Text == text && o.Visible() {
			return o
		}
	case *fyne.Container:
		if !o.Visible() {
			return nil
		}
		for _, c := range o.Objects {
			if b := VisibleButton(c, text); b != nil {
				return b
			}
		}
	}
	return nil
}

// FindButton finds the button labelled text under o.
func FindButton(o fyne.CanvasObject, text string) *widget.Button {
	switch w := o.(type) {
	case *widget.Button:
		if w.Text == text {
			return w
		}
	case *fyne.Container:
		for _, c := range w.Objects {
			if b := FindButton(c, text); b != nil {
				return b
			}
		}
	case fyne.Widget:
		for _, c := range test.WidgetRenderer(w).Objects() {
			if b := FindButton(c, text); b != nil {
				return b
			}
		}
	}
	return nil
}
