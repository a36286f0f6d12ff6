// Command barewindow is the floor for Perch's idle-CPU benchmark: a bare
// Fyne window of the same size holding one focused multi-line entry (the
// composer's widget) and a label, nothing else.
package main

import (
	"fmt"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/app"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"
)

func main() {
	a := app.NewWithID("io.perch.barewindow")
	w := a.NewWindow("Bare Fyne window")
	e := widget.NewMultiLineEntry()
	e.SetPlaceHolder("Type here")
	w.SetContent(container.NewBorder(nil, e, nil, nil, widget.NewLabel("A bare Fyne window")))
	w.Resize(fyne.NewSize(980, 680))
	started := time.Now()
	a.Lifecycle().SetOnStarted(func() {
		w.Canvas().Focus(e)
		go func() {
			time.Sleep(time.Second / 60)
			fyne.Do(func() { fmt.Printf("perch: ready in %d ms\n", time.Since(started).Milliseconds()) })
		}()
	})
	w.ShowAndRun()
}
