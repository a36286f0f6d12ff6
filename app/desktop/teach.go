package desktop

import (
	"fmt"
	"path/filepath"

	"fyne.io/fyne/v2"

	"perch/app/chat"
	"perch/app/history"
	"perch/app/server"
	"perch/app/teach"
	"perch/assets"
	"perch/ui"
)

// Teaching in the app: the adapter choice new chats, quick-ask and the
// local API take, the teach service behind the Teach page, and the
// menubar and notifications while a run goes.

// adapterChoice keeps the current adapter in the app's preferences and
// names adapters from the library.
type adapterChoice struct {
	prefs fyne.Preferences
	store *history.Store
}

const defaultAdapterKey = "perch.defaultAdapter"

func (c adapterChoice) Default() string {
	id := c.prefs.String(defaultAdapterKey)
	if id != "" && c.Name(id) == "" {
		return "" // deleted since
	}
	return id
}

func (c adapterChoice) SetDefault(id string) error {
	c.prefs.SetString(defaultAdapterKey, id)
	return nil
}

func (c adapterChoice) Name(id string) string { return c.lookup(id).Name }

// Dir is the folder of adapter id ("" for none or unknown).
func (c adapterChoice) Dir(id string) string { return c.lookup(id).Dir }

// lookup is adapter id's record (empty for none or unknown).
func (c adapterChoice) lookup(id string) history.Adapter {
	if id == "" {
		return history.Adapter{}
	}
	a, _ := c.store.AdapterByID(id)
	return a
}

// newTeacher builds the teach service over the history in dataDir.
func (g *App) newTeacher(dataDir string, trainer teach.Trainer, seed *uint64) (*teach.Service, error) {
	svc, interrupted, err := teach.New(teach.Options{
		Store: g.store, Dir: dataDir, Trainer: trainer, Seed: seed,
		Bases: g.trainableModels,
		Locate: func(id string) (string, string, error) {
			loc, err := g.catalog.Locate(id)
			return loc.Dir, loc.Name, err
		},
		SystemPrompt: func() string { return g.settings.Load().SystemPrompt },
		Notify: func(title, body string) {
			g.app.SendNotification(fyne.NewNotification(title, body))
		},
	})
	if err != nil {
		return nil, err
	}
	if interrupted > 0 {
		fyne.LogError(fmt.Sprintf("%d training run(s) were interrupted when Perch last stopped; the Teach page resumes them from their checkpoints", interrupted), nil)
	}
	svc.Watch(func(u ui.TrainUpdate) { fyne.Do(func() { g.showTraining(u.Run) }) })
	return svc, nil
}

// trainableModels are the downloaded models and added folders.
func (g *App) trainableModels() ([]ui.TeachBase, error) {
	ms, err := g.catalog.Models()
	if err != nil {
		return nil, err
	}
	var out []ui.TeachBase
	for _, m := range ms {
		if m.Downloaded || filepath.IsAbs(m.ID) {
			out = append(out, ui.TeachBase{ID: m.ID, Name: m.Name})
		}
	}
	return out, nil
}

// showTraining puts the run going on in the menubar.
func (g *App) showTraining(r ui.TrainRun) {
	if !g.trayOK {
		return
	}
	label := ""
	switch r.State {
	case ui.RunPreparing:
		label = "Preparing " + r.Plan.Name + "…"
	case ui.RunTraining:
		label = fmt.Sprintf("Training %s · %d%%", r.Plan.Name, 100*r.Step/max(r.Steps, 1))
	case ui.RunPaused:
		label = "Training " + r.Plan.Name + " · paused"
	}
	g.ui.SetTraining(label, assets.TrayTrainingIcon, func() { g.showMain(); g.ui.Main.ShowTeach() })
}

// wireTeaching gives the chat service the adapter choice and returns the
// Teach page's services (nil Teacher without a trainer).
func (g *App) wireTeaching(dataDir string, svc *chat.Service, trainer teach.Trainer) (ui.Teacher, ui.Adapters) {
	g.choice = adapterChoice{prefs: g.app.Preferences(), store: g.store}
	svc.Choice = g.choice
	if g.api != nil {
		g.api.adapters = g.apiAdapters
	}
	t, err := g.newTeacher(dataDir, trainer, svc.Seed)
	if err != nil {
		fyne.LogError("the Teach page is off", err)
		return nil, nil
	}
	g.teacher = t
	if trainer == nil {
		return nil, t
	}
	return t, t
}

// trainer is the engine's trainer on the runtime's model.
func (g *App) trainer() teach.Trainer { return teach.NewEngineTrainer(g.rt) }

// apiAdapters are base's adapters for the local API, and the current
// choice's name when it is one of them.
func (g *App) apiAdapters(base string) ([]server.AdapterModel, string) {
	return server.Library(g.store, base, g.choice.Default())
}
