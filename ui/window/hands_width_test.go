package window

import (
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"perch/ui"
	"perch/ui/internal/fake"
)

// The window's width on every page, and the wheel over fields.

// The window keeps the width it is given on every page, at the smallest
// size a person is likely to give it and at two larger ones: no page asks
// for more (the issue: 745 → 809 px on opening Teach, and it stayed).
func TestEveryPageKeepsTheWindowWidth(t *testing.T) {
	h := newTeachHarness(t, fake.Script{Deltas: fake.Words("An answer.")})
	h.teacher.Summary = ui.DataSummary{Pairs: 6}
	mw := h.ui.Main
	answerOnce(h.harness, "A question?")
	teach := openTeach(h) // with a stopped run's card, its widest state
	teach.Run.Follow(ui.TrainRun{ID: "r", State: ui.RunStopped, Steps: 60, Step: 30, LastCheckpoint: 20,
		BaseName: "Gemma-4 (text-tiny)", Plan: ui.TrainPlan{Name: "my-style"}})
	h.loop.Drain()
	pages := []struct {
		name string
		show func()
	}{
		{"chat", mw.ShowChat}, {"models", mw.ShowModels}, {"settings", mw.ShowSettings},
		{"teach", func() { openTeach(h) }}, {"chat again", mw.ShowChat},
	}
	for _, size := range []fyne.Size{{Width: 600, Height: 500}, {Width: 980, Height: 700}, {Width: 1600, Height: 1000}} {
		mw.Window.Resize(size)
		side := float32(-1) // the sidebar keeps its width from page to page
		for _, p := range pages {
			p.show()
			h.loop.Drain()
			if need := mw.Window.Content().MinSize().Width; need > size.Width {
				t.Errorf("at %.0f×%.0f the %s page needs %.0f px", size.Width, size.Height, p.name, need)
			}
			if got := mw.Window.Canvas().Size().Width; got != size.Width {
				t.Errorf("at %.0f×%.0f the %s page made the window %.0f px wide", size.Width, size.Height, p.name, got)
			}
			scrolls := map[string]*container.Scroll{"teach": teach.Scroll}
			if mw.settings != nil {
				scrolls["settings"] = mw.settings.Root.(*container.Scroll)
			}
			if mw.models != nil {
				scrolls["models"] = mw.models.Root.(*container.Scroll)
			}
			if s := scrolls[p.name]; s != nil && s.Content.MinSize().Width > s.Size().Width {
				t.Errorf("at %.0f×%.0f %s needs %.0f px of its %.0f: it scrolls sideways", size.Width, size.Height, p.name, s.Content.MinSize().Width, s.Size().Width)
			}
			if w := mw.side.root.Size().Width; side >= 0 && w != side {
				t.Errorf("at %.0f×%.0f the sidebar is %.0f px wide on the %s page, %.0f before", size.Width, size.Height, w, p.name, side)
			} else {
				side = w
			}
		}
	}
}

// scrollableAt is what the driver sends a wheel event at pos to: the last
// visible fyne.Scrollable under it in drawing order (the frontmost).
func scrollableAt(root fyne.CanvasObject, pos fyne.Position) fyne.Scrollable {
	var found fyne.Scrollable
	var walk func(o fyne.CanvasObject, at fyne.Position)
	walk = func(o fyne.CanvasObject, at fyne.Position) {
		if !o.Visible() {
			return
		}
		at = at.Add(o.Position())
		sz := o.Size()
		if pos.X < at.X || pos.Y < at.Y || pos.X >= at.X+sz.Width || pos.Y >= at.Y+sz.Height {
			return
		}
		if s, ok := o.(fyne.Scrollable); ok {
			found = s
		}
		switch w := o.(type) {
		case *fyne.Container:
			for _, c := range w.Objects {
				walk(c, at)
			}
		case fyne.Widget:
			for _, c := range test.WidgetRenderer(w).Objects() {
				walk(c, at)
			}
		}
	}
	walk(root, fyne.Position{})
	return found
}

// pointOn scrolls s until o shows, and gives a point on o in the window.
func pointOn(s *container.Scroll, o fyne.CanvasObject) fyne.Position {
	d := fyne.CurrentApp().Driver()
	top := d.AbsolutePositionForObject(o).Y - d.AbsolutePositionForObject(s).Y + s.Offset.Y
	s.ScrollToOffset(fyne.NewPos(0, max(0, min(top-40, s.Content.Size().Height-s.Size().Height))))
	return d.AbsolutePositionForObject(o).AddXY(4, o.Size().Height/2)
}

// The wheel over a field of Teach's form, or of Settings, turns the page.
func TestWheelScrollsThePageOverFields(t *testing.T) {
	h := newTeachHarness(t)
	h.teacher.Summary = ui.DataSummary{Pairs: 6}
	mw := h.ui.Main
	v := openTeach(h)
	root := mw.Window.Content()
	for key, f := range v.Fields {
		if !f.Visible() || !v.Advanced.Items[0].Open && key != "name" && key != "steps" {
			continue // under the closed Advanced
		}
		at := pointOn(v.Scroll, f)
		if got := scrollableAt(root, at); got != v.Scroll {
			t.Errorf("the wheel over the %s field goes to a %T, not the page", key, got)
		}
	}
	at := pointOn(v.Scroll, v.Fields["name"])
	before := v.Scroll.Offset.Y
	scrollableAt(root, at).Scrolled(&fyne.ScrollEvent{Scrolled: fyne.Delta{DY: -120}})
	if v.Scroll.Offset.Y <= before {
		t.Fatalf("the wheel over the name field left the page at %.0f px", v.Scroll.Offset.Y)
	}
	mw.ShowSettings()
	h.loop.Drain()
	s := mw.settings
	for name, f := range map[string]*widget.Entry{"Temperature": s.Gen.Temp, "Max tokens": s.Gen.MaxTokens, "API port": s.Port} {
		at := pointOn(s.Root.(*container.Scroll), f)
		if got := scrollableAt(root, at); got != s.Root.(fyne.Scrollable) {
			t.Errorf("the wheel over Settings' %s goes to a %T, not the page", name, got)
		}
	}
}
