package window

import (
	"fmt"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"perch/ui/look"
)

// Scripted steps for the newcomer's-hands pictures (make screenshot): the
// same paths as a click, the keyboard left to the real one. UI goroutine.

// PressCorrectLast presses the newest answer's pencil, as a click does.
func (mw *MainWindow) PressCorrectLast() error {
	v, err := mw.lastAnswer()
	if err != nil {
		return err
	}
	for _, o := range v.Actions.Objects {
		if b, ok := o.(*look.TipButton); ok && b.Icon != nil && b.Icon.Name() == theme.DocumentCreateIcon().Name() {
			b.OnTapped()
			return nil
		}
	}
	return fmt.Errorf("the newest answer has no correct button")
}

// CorrectionDraft is the text in the newest answer's open correction box,
// and whether that box has the keyboard.
func (mw *MainWindow) CorrectionDraft() (text string, focused bool, err error) {
	v, err := mw.lastAnswer()
	if err != nil {
		return "", false, err
	}
	if !v.Editing || len(v.Body.Objects) < 2 {
		return "", false, fmt.Errorf("no correction box is open")
	}
	e, ok := v.Body.Objects[1].(*widget.Entry)
	if !ok {
		return "", false, fmt.Errorf("no correction box is open")
	}
	return e.Text, mw.Window.Canvas().Focused() == fyne.Focusable(e), nil
}

// CancelCorrection closes the open correction box without saving.
func (mw *MainWindow) CancelCorrection() {
	if v, err := mw.lastAnswer(); err == nil && v.Editing {
		v.Editing = false
		v.Update(v.Msg)
	}
}

// PressStartTraining scrolls Teach's page to "Start training", as a person
// must to reach it, and presses it.
func (mw *MainWindow) PressStartTraining() {
	v := mw.teach
	d := fyne.CurrentApp().Driver()
	top := d.AbsolutePositionForObject(v.Start).Y - d.AbsolutePositionForObject(v.Scroll).Y + v.Scroll.Offset.Y
	v.Scroll.ScrollToOffset(fyne.NewPos(0, max(0, top-v.Scroll.Size().Height+2*v.Start.Size().Height)))
	v.Start.OnTapped()
}

// TeachScroll is how far down the Teach page is scrolled.
func (mw *MainWindow) TeachScroll() float32 {
	if mw.teach == nil {
		return 0
	}
	return mw.teach.Scroll.Offset.Y
}

// OpenFromSidebar opens the conversation titled title with a click in the
// sidebar's list.
func (mw *MainWindow) OpenFromSidebar(title string) error {
	for i, c := range mw.side.items {
		if c.Title == title {
			mw.side.list.Select(i)
			return nil
		}
	}
	return fmt.Errorf("no chat titled %q in the sidebar", title)
}

// ChatTitles are the conversations the sidebar lists, newest first.
func (mw *MainWindow) ChatTitles() []string {
	var out []string
	for _, c := range mw.side.items {
		out = append(out, c.Title)
	}
	return out
}

// LatestInView reports whether the chat's newest message shows.
func (mw *MainWindow) LatestInView() bool {
	v := mw.chat
	if len(v.Views) == 0 {
		return false
	}
	d := fyne.CurrentApp().Driver()
	last := v.Views[len(v.Views)-1].Root
	top := d.AbsolutePositionForObject(last).Y - d.AbsolutePositionForObject(v.Scroll).Y
	return top >= 0 && top < v.Scroll.Size().Height
}

// SidebarWidth is the sidebar's width now.
func (mw *MainWindow) SidebarWidth() float32 { return mw.side.root.Size().Width }
