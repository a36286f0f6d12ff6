package window

import (
	"fmt"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"perch/ui"
	"perch/ui/chat"
	"perch/ui/look"
	"perch/ui/models"
	"perch/ui/settings"
	"perch/ui/teach"
	"perch/ui/tools"
)

// Deps are the services the views use.
type Deps struct {
	Chat     ui.Chat
	Model    ui.Model
	Catalog  ui.Catalog
	Recorder ui.Recorder // nil: no microphone support in this build
	Settings ui.SettingsStore
	// ApplySettings makes saved settings take effect (hotkey, login item,
	// local API); its error is shown under the form.
	ApplySettings      func(old, new ui.Settings) error
	LoginItemSupported bool
	Icon               fyne.Resource // the app icon, for the welcome page
	// ImageBudgets are the image budgets the engine takes (the settings'
	// choices; nil: not checked).
	ImageBudgets []int
	// Teaching (nil: no Teach page, no feedback buttons).
	Teacher  ui.Teacher
	Adapters ui.Adapters
	Feedback ui.Feedback
	// Tools is Settings → Tools (nil: no tools page).
	Tools ui.ToolSettings
}

// UI is Perch's windows and menubar menu.
type UI struct {
	env   *ui.Env
	Main  *MainWindow
	quick *chat.QuickAsk
	tray  *tray
}

// New builds the main window (not yet shown).
func New(a fyne.App, d Deps) *UI {
	return build(a, d, fyne.Do, func(f func()) {
		go func() {
			defer func() {
				if p := recover(); p != nil { // log it; never take the app down
					fyne.LogError(fmt.Sprintf("background task panicked: %v", p), nil)
				}
			}()
			f()
		}()
	})
}

func build(a fyne.App, d Deps, do, run func(func())) *UI {
	e := &ui.Env{App: a, Chat: d.Chat, Model: d.Model, Catalog: d.Catalog, Recorder: d.Recorder,
		Settings: d.Settings, ApplySettings: d.ApplySettings, LoginSupported: d.LoginItemSupported, Icon: d.Icon, Do: do, Run: run,
		Teacher: d.Teacher, Adapters: d.Adapters, Feedback: d.Feedback, Budgets: d.ImageBudgets, Tools: d.Tools}
	u := &UI{env: e}
	u.Main = newMainWindow(e)
	return u
}

// QuickAsk returns the quick-ask popup, creating it on first use.
func (u *UI) QuickAsk() *chat.QuickAsk {
	if u.quick == nil {
		u.quick = chat.NewQuickAsk(u.env, func(convID string) *chat.View {
			u.Main.side.reload()
			u.Main.ShowConversation(convID)
			u.Main.Window.Show()
			u.Main.Window.RequestFocus()
			return u.Main.chat
		})
	}
	return u.quick
}

// MainWindow is the chat window: conversation list beside the chat, or the
// models, settings or welcome page.
type MainWindow struct {
	Window   fyne.Window
	env      *ui.Env
	side     *sidebar
	chat     *chat.View
	models   *models.View
	settings *settings.View
	tools    *tools.Page
	teach    *teach.View
	welcome  *models.FirstRun
	pages    *fyne.Container
	title    *widget.Label
	pill     *modelPill
	toolSw   *tools.Switch // nil: the chat has no tools
	page     string        // "chat", "welcome", "models", "settings", "teach"
}

func newMainWindow(e *ui.Env) *MainWindow {
	w := e.App.NewWindow("Perch")
	mw := &MainWindow{Window: w, env: e}
	nav := container.NewVBox(widget.NewSeparator(),
		navButton("Models", theme.StorageIcon(), mw.ShowModels))
	if e.Teacher != nil {
		teach := navButton("Teach", look.TeachIcon, mw.ShowTeach)
		nav.Add(teach)
		mw.watchTraining(teach)
	}
	nav.Add(navButton("Settings", theme.SettingsIcon(), mw.ShowSettings))
	mw.side = newSidebar(e, w, nav)
	mw.chat = chat.NewView(e, w, "Message Gemma  (Enter to send, Shift+Enter for a new line)")
	mw.chat.Tips = look.NewTips()
	mw.side.onSelect = func(id string) {
		mw.ShowConversation(id)
		mw.chat.ScrollToMatch(mw.side.search.Text) // a search hit opens at the match
	}
	mw.side.onNew = mw.newChat
	mw.chat.OnNewChat = func() { mw.ShowConversation("") }
	mw.side.onDelete = func(id string) {
		if mw.chat.ConvID == id {
			mw.ShowConversation("")
		}
	}
	mw.chat.OnChange = func(id string) {
		mw.side.select_(id)
		mw.side.reload()
		mw.updateTitle()
		mw.refreshAdapter()
	}
	mw.title = widget.NewLabelWithStyle("New chat", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	mw.title.Truncation = fyne.TextTruncateEllipsis
	mw.pill = newModelPill(mw.ShowModels)
	if e.Feedback != nil {
		mw.pill.btn.OnTapped = mw.showModelMenu
	}
	right := mw.pill.root
	if tc, ok := e.Chat.(ui.ToolChats); ok {
		mw.toolSw = tools.NewSwitch(tc, func() string { return mw.chat.ConvID })
		right = container.NewHBox(mw.toolSw.Btn, mw.pill.root)
	}
	header := container.NewBorder(nil, nil, nil, right, mw.title)
	chatPage := container.NewBorder(container.NewVBox(container.NewPadded(header), widget.NewSeparator()), nil, nil, nil, mw.chat.Root)
	mw.pages = container.NewStack(chatPage)
	split := container.NewHSplit(mw.side.root, mw.pages)
	split.Offset = 0.26
	w.SetContent(container.NewStack(split, mw.chat.Tips.Layer))
	w.Resize(fyne.NewSize(980, 680))
	w.SetOnDropped(func(_ fyne.Position, uris []fyne.URI) { mw.Drop(uris) })
	mw.installKeys()
	e.Model.Watch(func(s ui.ModelState) { e.Do(func() { mw.modelChanged(s) }) })
	mw.modelChanged(e.Model.State())
	mw.showChat()
	return mw
}

func navButton(label string, icon fyne.Resource, f func()) *widget.Button {
	b := widget.NewButtonWithIcon(label, icon, f)
	b.Importance = widget.LowImportance
	b.Alignment = widget.ButtonAlignLeading
	return b
}

// Drop attaches dropped files to the message being written (the same path
// as the attach button and paste).
func (mw *MainWindow) Drop(uris []fyne.URI) {
	var paths []string
	for _, u := range uris {
		if u.Scheme() == "file" {
			paths = append(paths, u.Path())
		}
	}
	if len(paths) == 0 {
		return
	}
	mw.showChat()
	mw.chat.Comp.AddPaths(paths)
}

// Attach attaches files by path (command line, tests).
func (mw *MainWindow) Attach(paths ...string) { mw.showChat(); mw.chat.Comp.AddPaths(paths) }

// Composer text, for scripted runs: SetDraft types text and Submit sends it.
func (mw *MainWindow) SetDraft(text string) { mw.chat.Comp.Entry.SetText(text) }

// Submit sends the draft as if the user pressed Enter.
func (mw *MainWindow) Submit() { mw.chat.Comp.Submit() }

// Busy reports whether an answer is streaming.
func (mw *MainWindow) Busy() bool { return mw.chat.Live != nil }

// LastMessage is the last message shown in the chat.
func (mw *MainWindow) LastMessage() (ui.Message, bool) {
	vs := mw.chat.Views
	if len(vs) == 0 {
		return ui.Message{}, false
	}
	return vs[len(vs)-1].Msg, true
}

// PendingAttachments counts chips in the composer.
func (mw *MainWindow) PendingAttachments() int { return len(mw.chat.Comp.Pending) }

// Notice is the composer's current warning ("" when none).
func (mw *MainWindow) Notice() string { return mw.chat.Comp.NoticeText.Text }

// ShowConversation opens conversation id ("" for a new chat).
func (mw *MainWindow) ShowConversation(id string) {
	if err := mw.chat.Open(id); err != nil {
		mw.chat.Comp.ShowNotice("Could not open this chat: " + err.Error())
	}
	mw.side.select_(id)
	mw.updateTitle()
	mw.refreshAdapter()
	mw.showChat()
}

func (mw *MainWindow) updateTitle() {
	title := "New chat"
	for _, c := range mw.side.items {
		if c.ID == mw.chat.ConvID {
			title = c.Title
		}
	}
	mw.title.SetText(title)
	if mw.toolSw != nil {
		mw.toolSw.Refresh()
	}
}

// showChat shows the conversation, or the welcome page while there is no model.
func (mw *MainWindow) showChat() {
	s := mw.env.Model.State()
	if s.ID == "" && !s.Loading {
		mw.showPage("welcome", mw.welcomePage())
		return
	}
	mw.leavePage()
	mw.page = "chat"
	if mw.toolSw != nil {
		mw.toolSw.Refresh() // Settings → Tools may have changed the servers
	}
	mw.pages.Objects = mw.pages.Objects[:1]
	mw.pages.Refresh()
	mw.focusComposer()
}

func (mw *MainWindow) showPage(name string, o fyne.CanvasObject) {
	mw.leavePage()
	bg := canvas.NewRectangle(look.ThemeColor(theme.ColorNameBackground))
	page := container.NewStack(bg, o)
	if name != "welcome" {
		back := widget.NewButtonWithIcon("Back to chat", theme.NavigateBackIcon(), mw.showChat)
		back.Importance = widget.LowImportance
		page = container.NewStack(bg, container.NewBorder(container.NewHBox(back, layout.NewSpacer()), nil, nil, nil, o))
	}
	mw.page = name
	mw.pages.Objects = append(mw.pages.Objects[:1], page)
	mw.pages.Refresh()
}

// leavePage saves what the shown page has pending (Settings' last typing).
func (mw *MainWindow) leavePage() {
	if mw.page == "settings" && mw.settings != nil {
		mw.settings.Leave()
	}
}

func (mw *MainWindow) welcomePage() fyne.CanvasObject {
	if mw.welcome == nil {
		mw.welcome = models.NewFirstRun(mw.env, mw.Window)
	}
	return mw.welcome.Root
}

// ShowModels opens the models page.
func (mw *MainWindow) ShowModels() {
	if mw.models == nil {
		mw.models = models.NewView(mw.env, mw.Window)
	}
	mw.models.Reload()
	mw.showPage("models", mw.models.Root)
}

// ShowTools opens Settings → Tools (nothing without tools).
func (mw *MainWindow) ShowTools() {
	if mw.env.Tools == nil {
		return
	}
	if mw.tools == nil {
		mw.tools = tools.NewPage(mw.env, mw.Window)
	}
	mw.tools.Reload()
	mw.showPage("tools", mw.tools.Root)
}

// ShowSettings opens the settings page.
func (mw *MainWindow) ShowSettings() {
	if mw.settings == nil {
		mw.settings = settings.NewView(mw.env, mw.Window)
		mw.settings.OnTools = mw.ShowTools
	}
	mw.leavePage()
	mw.settings.Load()
	mw.showPage("settings", mw.settings.Root)
}

func (mw *MainWindow) modelChanged(s ui.ModelState) {
	mw.pill.set(s)
	locked := s.ID == "" && !s.Loading
	placeholder := "Message Gemma  (Enter to send, Shift+Enter for a new line)"
	if locked {
		placeholder = "Get a model to start chatting"
	}
	mw.chat.Comp.SetLocked(locked, placeholder)
	// The welcome page gives way to the chat once a model is chosen, and
	// comes back if there is none.
	if (mw.page == "welcome" && !locked) || (mw.page != "welcome" && mw.page != "models" && locked) {
		mw.showChat()
	} else {
		mw.focusComposer()
	}
}

// modelPill shows the model's name and whether it is loaded, and opens the
// models page when tapped.
type modelPill struct {
	btn     *widget.Button
	dot     *canvas.Circle
	root    fyne.CanvasObject
	state   ui.ModelState
	adapter string // the conversation's adapter name ("" none)
}

func newModelPill(open func()) *modelPill {
	p := &modelPill{btn: widget.NewButton("", open), dot: canvas.NewCircle(theme.Color(theme.ColorNameDisabled))}
	p.btn.Importance = widget.LowImportance
	p.root = container.NewHBox(container.NewCenter(container.NewGridWrap(fyne.NewSquareSize(9), p.dot)), p.btn)
	return p
}

func (p *modelPill) set(s ui.ModelState) {
	p.state = s
	name, c := s.Name, look.ThemeColor(theme.ColorNameDisabled)
	if p.adapter != "" && s.ID != "" {
		name += " + " + p.adapter
	}
	switch {
	case s.ID == "":
		name = "No model"
	case s.Err != "":
		name, c = s.Name+" · failed to load", look.ThemeColor(theme.ColorNameError)
	case s.Loading:
		name, c = s.Name+" · loading…", look.ThemeColor(theme.ColorNameWarning)
	case s.Loaded:
		c = look.ThemeColor(theme.ColorNameSuccess)
	}
	p.btn.SetText(name)
	p.dot.FillColor = c
	p.dot.Refresh()
}
