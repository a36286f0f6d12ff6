package window

import (
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"

	"perch/ui"
	"perch/ui/internal/fake"
	"perch/ui/look"
)

type harness struct {
	t       *testing.T
	app     fyne.App
	loop    *fake.Loop
	chat    *fake.Chat
	model   *fake.Model
	catalog *fake.Catalog
	rec     *fake.Recorder
	ui      *UI
}

func newHarness(t *testing.T, answers ...fake.Script) *harness {
	return newHarnessWith(t, nil, answers...)
}

// newHarnessWith lets a test add services to the Deps (Teach's fakes).
func newHarnessWith(t *testing.T, more func(*harness, *Deps), answers ...fake.Script) *harness {
	a := test.NewTempApp(t)
	a.Settings().SetTheme(look.NewTheme())
	h := &harness{t: t, app: a, loop: fake.NewLoop(), chat: fake.NewChat(answers...), catalog: fake.NewCatalog(), rec: &fake.Recorder{},
		model: &fake.Model{S: ui.ModelState{ID: "e2b", Name: "Gemma-4 E2B", Loaded: true, Vision: true, Audio: true}}}
	d := Deps{Chat: h.chat, Model: h.model, Catalog: h.catalog, Recorder: h.rec, Settings: ui.PrefsSettings{P: a.Preferences()}}
	if more != nil {
		more(h, &d)
	}
	h.ui = build(a, d, h.loop.Do, func(f func()) { go f() })
	h.ui.Main.Window.Resize(fyne.NewSize(900, 640))
	h.ui.Main.Window.Show()
	t.Cleanup(func() {
		// Let streams wind down so no goroutine posts into a finished test.
		time.Sleep(20 * time.Millisecond)
		h.loop.Drain()
	})
	return h
}

// teachHarness is the harness with the Teach services.
type teachHarness struct {
	*harness
	teacher  *fake.Teacher
	adapters *fake.Adapters
	feedback *fake.Feedback
}

func newTeachHarness(t *testing.T, answers ...fake.Script) *teachHarness {
	th := &teachHarness{teacher: fake.NewTeacher(), adapters: fake.NewAdapters()}
	th.harness = newHarnessWith(t, func(h *harness, d *Deps) {
		th.feedback = fake.NewFeedback(h.chat)
		d.Teacher, d.Adapters, d.Feedback = th.teacher, th.adapters, th.feedback
	}, answers...)
	return th
}
