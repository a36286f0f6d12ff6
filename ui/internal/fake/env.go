package fake

import (
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"

	"perch/ui"
	"perch/ui/look"
)

// Env is one view's test bench: a Fyne test app in Perch's theme, a
// window, the fakes, and the ui.Env that carries them to the view (Do
// posts to Loop, Run starts a goroutine).
type Env struct {
	*ui.Env
	T        *testing.T
	Loop     *Loop
	Win      fyne.Window
	Chat     *Chat
	Model    *Model
	Catalog  *Catalog
	Teacher  *Teacher
	Adapters *Adapters
	Rec      *Recorder
}

// NewEnv returns a bench whose model (Gemma-4 E2B) is loaded.
func NewEnv(t *testing.T) *Env {
	a := test.NewTempApp(t)
	a.Settings().SetTheme(look.NewTheme())
	e := &Env{T: t, Loop: NewLoop(), Win: a.NewWindow("Perch"), Chat: NewChat(), Catalog: NewCatalog(),
		Model:   &Model{S: ui.ModelState{ID: "e2b", Name: "Gemma-4 E2B", Loaded: true, Vision: true, Audio: true}},
		Teacher: NewTeacher(), Adapters: NewAdapters(), Rec: &Recorder{}}
	e.Env = &ui.Env{App: a, Chat: e.Chat, Recorder: e.Rec, Model: e.Model, Catalog: e.Catalog, Teacher: e.Teacher, Adapters: e.Adapters,
		Settings: ui.PrefsSettings{P: a.Preferences()}, Do: e.Loop.Do, Run: func(f func()) { go f() }}
	t.Cleanup(func() {
		time.Sleep(20 * time.Millisecond) // let goroutines post what they were doing
		e.Loop.Drain()
	})
	return e
}

// Show puts o in the window at the main window's size and shows it.
func (e *Env) Show(o fyne.CanvasObject) {
	e.Win.SetContent(o)
	e.Win.Resize(fyne.NewSize(900, 640))
	e.Win.Show()
}
