package desktop

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"time"

	"fyne.io/fyne/v2"
	fyneapp "fyne.io/fyne/v2/app"
	"fyne.io/fyne/v2/dialog"

	"perch/app/chat"
	"perch/app/engines"
	"perch/app/history"
	"perch/app/hub"
	"perch/app/hub/catalog"
	"perch/app/platform"
	"perch/app/teach"
	"perch/app/toolset"
	"perch/assets"
	"perch/engine"
	"perch/ui"
	"perch/ui/look"
	"perch/ui/window"
)

// AppID is Perch's bundle id, and Version its version (both also in
// FyneApp.toml; bundle_test checks they agree).
const (
	AppID   = "io.perch.app"
	Version = "0.1.0"
)

// App is the running app: the services and the windows they drive.
type App struct {
	app        fyne.App
	ui         *window.UI
	store      *history.Store
	rt         *chat.Runtime
	catalog    *catalog.Catalog
	settings   ui.PrefsSettings
	hotkey     platform.Hotkey
	login      platform.LoginItem
	api        *localAPI
	trayOK     bool
	dataDir    string
	choice     adapterChoice
	teacher    *teach.Service
	chat       *chat.Service
	tools      *toolset.Set
	contextCap int // gui -context (0: the model's own)
	exitCode   int // set by a scripted run that failed
}

// Flags are the app's options (perch gui's flags).
type Flags struct {
	Hidden     bool    // start in the menubar only
	QuickAsk   bool    // open the quick-ask popup once started
	Context    int     // cap on the model's context (0: the model's)
	DataDir    string  // history folder (default: the OS's app-data folder)
	Model      string  // model folder or repo to use (default: the saved choice)
	ReadyProbe bool    // print "perch: ready" once the window is interactive
	Seed       *uint64 // sample every answer with this seed (reproducible scripted runs)
}

// Start builds the app and runs it until Quit; it returns the exit code.
func Start(f Flags) int {
	started := time.Now()
	// What FyneApp.toml says, for builds made with plain go build.
	fyneapp.SetMetadata(fyne.AppMetadata{ID: AppID, Name: "Perch", Version: Version, Build: 1,
		Icon: assets.AppIcon, Migrations: map[string]bool{"fyneDo": true}})
	a := fyneapp.NewWithID(AppID)
	a.SetIcon(assets.AppIcon)
	a.Settings().SetTheme(look.NewTheme())
	g := &App{app: a, settings: ui.PrefsSettings{P: a.Preferences(), Budgets: engine.ImageBudgets()}, login: platform.NewLoginItem(AppID)}

	dir := f.DataDir
	if dir == "" {
		dir = DefaultDataDir()
	}
	inst, err := platform.ClaimInstance(dir)
	if errors.Is(err, platform.ErrRunning) {
		// A second launch raises the first (perch quick-ask opens its popup).
		cmd := platform.CmdShow
		if f.QuickAsk {
			cmd = platform.CmdQuickAsk
		}
		if err := platform.AskInstance(dir, cmd); err != nil {
			fmt.Fprintf(os.Stderr, "perch: %v\n", err)
			return 1
		}
		return 0
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "perch: %v\n", err)
		return 1
	}
	defer inst.Close()
	var warnings []string
	store, rec, err := history.Open(dir)
	switch {
	case errors.Is(err, history.ErrNewerSchema):
		warnings = append(warnings, err.Error()+". This session's chats will not be kept.")
		store, _, err = history.Open("")
	case err == nil && rec.Quarantined != "":
		warnings = append(warnings, fmt.Sprintf("Your chat history was damaged and could not be read. It was kept at %s and a new history started.", rec.Quarantined))
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "perch: %v\n", err)
		return 1
	}
	g.store, g.dataDir = store, dir
	g.contextCap = f.Context
	defer store.Close()

	s := g.settings.Load()
	h := hub.New()
	if s.ModelsDir != "" {
		h.Dir = s.ModelsDir
	}
	g.catalog = catalog.New(h)
	g.rt = chat.NewRuntime(g.catalog.Locate, g.openEngine, g.rememberModel)
	defer g.rt.Close()
	g.selectStartupModel(f.Model, s)

	g.api = newLocalAPI(g.rt)
	defer g.api.Close()
	svc := chat.New(store, g.rt, chat.MediaProbe{Video: chat.VideoFrame, Pictures: engines.Pictures}, g.settings.Load)
	svc.Seed = f.Seed
	tools, err := toolset.Open(dir)
	if err != nil {
		warnings = append(warnings, "Your tool servers could not be read ("+err.Error()+"). Tools are off until it is fixed.")
		tools, _ = toolset.Open("")
	}
	defer tools.Close()
	svc.MCP = tools
	g.chat, g.tools = svc, tools
	teacher, adapters := g.wireTeaching(dir, svc, g.trainer())
	g.ui = window.New(a, window.Deps{
		Chat: svc, Model: g.rt, Catalog: g.catalog, Recorder: newRecorder(), Settings: g.settings,
		ApplySettings: g.applySettings, LoginItemSupported: g.login.Supported(), Icon: assets.AppIcon,
		Teacher: teacher, Adapters: adapters, Feedback: svc,
		ImageBudgets: engine.ImageBudgets(), Tools: tools,
	})
	mw := g.ui.Main.Window
	mw.SetMaster()
	g.trayOK = platform.TrayHostPresent() && g.ui.InstallTray(assets.TrayIcon, "", window.TrayActions{
		QuickAsk: g.showQuickAsk,
		Open:     g.showMain,
		Settings: func() { g.showMain(); g.ui.Main.ShowSettings() },
		Quit:     a.Quit,
	})
	if g.trayOK {
		// Closing the window keeps Perch in the menubar.
		mw.SetCloseIntercept(mw.Hide)
	}
	a.Lifecycle().SetOnStarted(func() {
		inst.Serve(g.instanceCommand)
		g.setHotkey(s.Hotkey, false)
		if f.QuickAsk {
			g.showQuickAsk()
		}
		if s.LocalAPI {
			if err := g.api.Set(true, s.LocalAPIPort); err != nil {
				warnings = append(warnings, err.Error())
			}
		}
		for _, w := range warnings {
			dialog.ShowInformation("Perch", w, mw)
		}
		if f.ReadyProbe {
			// The loop draws on its first tick (1/60 s): after that the window
			// is up and takes input.
			go func() {
				time.Sleep(time.Second / 60)
				fyne.Do(func() { fmt.Printf("perch: ready in %d ms\n", time.Since(started).Milliseconds()) })
			}()
		}
		if harness != nil && harness.Wanted() {
			go harness.Run(g)
		}
	})
	a.Lifecycle().SetOnStopped(g.hotkey.Off)
	// Hidden (launch at login) only where a tray icon leads back.
	if !f.Hidden || !g.trayOK {
		mw.Show()
	}

	a.Run()
	return g.exitCode
}

// selectStartupModel picks the model to show: the flag, else the saved
// choice, else the default model when it is already cached. Nothing is
// loaded until it is needed.
func (g *App) selectStartupModel(flagModel string, s ui.Settings) {
	id := flagModel
	if id == "" {
		id = s.DefaultModel
	}
	if id == "" {
		def := hub.DefaultModel().Repo
		if _, err := g.catalog.Hub().Snapshot(def, "main"); err == nil {
			id = def
		}
	}
	if id != "" {
		g.rt.Select(id) // an error shows in the model pill and on send
	}
}

func (g *App) rememberModel(id string) {
	s := g.settings.Load()
	if s.DefaultModel != id {
		s.DefaultModel = id
		g.settings.Save(s)
	}
}

// applySettings makes saved settings take effect.
func (g *App) applySettings(old, s ui.Settings) error {
	var errs []error
	if old.Hotkey != s.Hotkey {
		g.setHotkey(s.Hotkey, true)
	}
	if old.LaunchAtLogin != s.LaunchAtLogin && g.login.Supported() {
		if err := g.login.Set(s.LaunchAtLogin); err != nil {
			errs = append(errs, fmt.Errorf("launch at login: %w", err))
		}
	}
	if old.LocalAPI != s.LocalAPI || old.LocalAPIPort != s.LocalAPIPort {
		if err := g.api.Set(s.LocalAPI, s.LocalAPIPort); err != nil {
			errs = append(errs, err)
		}
	}
	if old.ModelsDir != s.ModelsDir {
		dir := s.ModelsDir
		if dir == "" {
			dir = hub.New().Dir
		}
		g.catalog.Hub().Dir = dir
	}
	if old.DefaultModel != s.DefaultModel && s.DefaultModel != "" && s.DefaultModel != g.rt.State().ID {
		g.rt.Select(s.DefaultModel)
	}
	return errors.Join(errs...)
}

func (g *App) showMain() {
	w := g.ui.Main.Window
	w.Show()
	w.RequestFocus()
}

func (g *App) showQuickAsk() { g.ui.QuickAsk().Show() }

// openEngine loads a model folder on the best backend here, its context
// capped at gui -context.
func (g *App) openEngine(dir string) (chat.Engine, engine.ModelInfo, error) {
	e, err := engines.Open(dir, engines.Settings{MaxContext: g.contextCap})
	if err != nil {
		return nil, engine.ModelInfo{}, err
	}
	return e, e.Info(), nil
}

// DefaultDataDir is the OS's folder for Perch's data: ~/Library/Application
// Support/Perch on macOS, $XDG_DATA_HOME/perch (~/.local/share/perch) on
// Linux, %AppData%\Perch on Windows.
func DefaultDataDir() string {
	switch runtime.GOOS {
	case "darwin", "windows":
		if d, err := os.UserConfigDir(); err == nil {
			return d + string(os.PathSeparator) + "Perch"
		}
	default:
		if d := os.Getenv("XDG_DATA_HOME"); d != "" {
			return d + "/perch"
		}
		if h, err := os.UserHomeDir(); err == nil {
			return h + "/.local/share/perch"
		}
	}
	return "perch-data"
}
