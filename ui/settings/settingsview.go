package settings

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"perch/ui"
	"perch/ui/look"
)

// View edits Settings and saves them through the store.
type View struct {
	env  *ui.Env
	win  fyne.Window
	Root fyne.CanvasObject

	Model                *widget.Select
	modelIDs             map[string]string // shown name → id
	system               *widget.Entry
	Gen                  *modelSettings
	Port                 *widget.Entry
	toolRounds           *widget.Entry
	OnTools              func() // opens Settings → Tools (nil: no tools)
	Thinking, login, api *widget.Check
	longChats            *widget.Select
	hotkey, modelsDir    *widget.Entry
	Status               *widget.Label
	hotkeyNote           *widget.Label
	loaded               ui.Settings // what is saved
	loading              bool        // load is filling the form: not a change
	typing               int         // keystrokes: only the newest one's timer saves
}

func NewView(e *ui.Env, win fyne.Window) *View {
	v := &View{env: e, win: win}
	v.Model = widget.NewSelect(nil, nil)
	v.Model.PlaceHolder = "No model downloaded yet"
	v.system = widget.NewMultiLineEntry()
	v.system.Wrapping = fyne.TextWrapWord
	v.system.SetPlaceHolder("You are a helpful assistant. (Optional: sent before every conversation.)")
	v.system.SetMinRowsVisible(3)
	v.Gen = newModelSettings(e.Budgets)
	v.Port = look.FieldEntry()
	v.toolRounds = look.FieldEntry()
	v.Thinking = widget.NewCheck("Think before answering", nil) // short: the page fits a 600 px window
	v.longChats = widget.NewSelect([]string{longChatTrim, longChatAsk}, nil)
	v.hotkey = look.FieldEntry()
	v.hotkey.SetPlaceHolder(ui.DefaultHotkey)
	v.hotkeyNote = widget.NewLabel("")
	v.hotkeyNote.Wrapping = fyne.TextWrapWord
	v.hotkeyNote.Importance = widget.LowImportance
	v.login = widget.NewCheck(look.PlatformText("Open Perch in the menubar when I log in", "Start Perch when I log in"), nil)
	if !e.LoginSupported {
		v.login.Disable()
	}
	v.modelsDir = widget.NewEntry()
	v.modelsDir.SetPlaceHolder("Hugging Face cache (~/.cache/huggingface/hub)")
	browse := widget.NewButtonWithIcon("", theme.FolderOpenIcon(), func() {
		dialog.ShowFolderOpen(func(u fyne.ListableURI, err error) {
			if err == nil && u != nil {
				v.modelsDir.SetText(u.Path())
			}
		}, win)
	})
	v.api = widget.NewCheck("Serve an OpenAI-compatible API", nil)
	v.Status = widget.NewLabel("")
	v.Status.Wrapping = fyne.TextWrapWord

	model := form(
		"Default model", v.Model,
		"System prompt", v.system,
		"Thinking", container.NewVBox(v.Thinking, look.Note("The model's thoughts show under Thoughts, above its answer.")),
		"Long chats", v.longChats,
	)
	useDefaults := widget.NewButtonWithIcon("Use the model's defaults", theme.ViewRefreshIcon(), v.Gen.reset)
	useDefaults.Importance = widget.LowImportance
	gen := form(
		"Temperature", v.Gen.Temp,
		"Top-p", v.Gen.topP,
		"Top-k", v.Gen.topK,
		"Max tokens", v.Gen.MaxTokens,
	)
	media := form(
		"Image detail", v.Gen.budget,
		"Video frames/s", v.Gen.fps,
		"Max video frames", v.Gen.frames,
	)
	app := form(
		"Quick-ask hotkey", container.NewVBox(v.hotkey, v.hotkeyNote),
		"Launch at login", v.login,
		"Models folder", container.NewBorder(nil, nil, nil, browse, v.modelsDir),
		"Local API", container.NewVBox(v.api, look.Note(look.PlatformText("On this Mac only (localhost).", "On this computer only (localhost)."))),
		"API port", v.Port,
	)
	saved := look.Caption("Changes are saved as you make them.")
	body := container.NewVBox(
		look.Heading("Settings"), saved,
		look.Section("Model", model), look.Section("Generation", gen), look.Section("Media", media),
		container.NewHBox(useDefaults), look.Section("App", app),
	)
	if e.Tools != nil {
		manage := widget.NewButtonWithIcon("Tool servers…", theme.SettingsIcon(), func() {
			if v.OnTools != nil {
				v.OnTools()
			}
		})
		body.Add(look.Section("Tools", form(
			"Servers", container.NewHBox(manage),
			"Rounds per answer", container.NewVBox(v.toolRounds, look.Note("How many rounds of tool calls one answer may make before it must answer.")),
		)))
	}
	body.Add(v.Status)
	v.Root = look.PageScroll(container.NewPadded(body))
	v.ShowHotkeyState()
	e.Model.Watch(func(s ui.ModelState) { e.Do(func() { v.Gen.showDefaults(s.Defaults) }) })
	v.Gen.showDefaults(e.Model.State().Defaults)
	v.Load()
	v.watchChanges()
	return v
}

// form lays out label/widget pairs with one label column width for every
// section, so the settings page reads as one aligned form.
func form(pairs ...any) fyne.CanvasObject {
	rows := container.NewVBox()
	for i := 0; i+1 < len(pairs); i += 2 {
		l := widget.NewLabelWithStyle(pairs[i].(string), fyne.TextAlignTrailing, fyne.TextStyle{Bold: true})
		rows.Add(container.New(&labeledRow{labelWidth: 150}, l, pairs[i+1].(fyne.CanvasObject)))
	}
	return rows
}

// labeledRow puts a fixed-width label left of a widget that takes the rest.
type labeledRow struct{ labelWidth float32 }

func (r *labeledRow) Layout(objs []fyne.CanvasObject, size fyne.Size) {
	pad := theme.Padding()
	lh := objs[0].MinSize().Height
	wh := objs[1].MinSize().Height
	y := float32(0) // top-aligned beside tall widgets, centred beside one-line ones
	if wh <= lh*1.5 {
		y = (wh - lh) / 2
	}
	objs[0].Move(fyne.NewPos(0, y))
	objs[0].Resize(fyne.NewSize(r.labelWidth, lh))
	objs[1].Move(fyne.NewPos(r.labelWidth+pad, 0))
	objs[1].Resize(fyne.NewSize(size.Width-r.labelWidth-pad, size.Height))
}

func (r *labeledRow) MinSize(objs []fyne.CanvasObject) fyne.Size {
	w := objs[1].MinSize()
	return fyne.NewSize(r.labelWidth+theme.Padding()+w.Width, max(w.Height, objs[0].MinSize().Height))
}

// Load shows the saved settings.
func (v *View) Load() {
	v.loading = true
	defer func() { v.loading = false }()
	v.typing++ // what was typed before is replaced
	s := v.env.Settings.Load()
	v.loaded = s
	v.modelIDs = map[string]string{}
	var names []string
	if models, err := v.env.Catalog.Models(); err == nil {
		for _, m := range models {
			if m.Downloaded {
				v.modelIDs[m.Name] = m.ID
				names = append(names, m.Name)
			}
		}
	}
	if s.DefaultModel != "" && !containsValue(v.modelIDs, s.DefaultModel) {
		v.modelIDs[s.DefaultModel] = s.DefaultModel
		names = append(names, s.DefaultModel)
	}
	sort.Strings(names)
	v.Model.Options = names
	if len(names) > 0 {
		v.Model.PlaceHolder = "Choose the model new chats use"
	}
	if m := v.env.Model.State(); s.DefaultModel == "" && m.Name != "" {
		v.Model.PlaceHolder = m.Name + ", the model in use" // none chosen: new chats use it
	}
	v.Model.ClearSelected()
	for n, id := range v.modelIDs {
		if id == s.DefaultModel {
			v.Model.SetSelected(n)
		}
	}
	v.system.SetText(s.SystemPrompt)
	v.Gen.set(s)
	v.Thinking.SetChecked(s.Thinking)
	v.longChats.SetSelected(longChatTrim)
	if s.ContextPolicy == ui.AskFirst {
		v.longChats.SetSelected(longChatAsk)
	}
	v.hotkey.SetText(s.Hotkey)
	v.login.SetChecked(s.LaunchAtLogin)
	v.modelsDir.SetText(s.ModelsDir)
	v.api.SetChecked(s.LocalAPI)
	v.Port.SetText(strconv.Itoa(s.LocalAPIPort))
	rounds := s.ToolRounds
	if rounds == 0 {
		rounds = ui.DefaultToolRounds
	}
	v.toolRounds.SetText(strconv.Itoa(rounds))
	v.Status.SetText("")
}

// read collects the form into Settings, reporting fields that are not numbers.
func (v *View) read() (ui.Settings, error) {
	s := v.loaded
	var bad []string
	num := func(name string, e *widget.Entry, dst *int) {
		n, err := strconv.Atoi(strings.TrimSpace(e.Text))
		if err != nil {
			bad = append(bad, name+" must be a whole number")
			return
		}
		*dst = n
	}
	s.DefaultModel = v.modelIDs[v.Model.Selected]
	s.SystemPrompt = strings.TrimSpace(v.system.Text)
	bad = append(bad, v.Gen.read(&s)...)
	s.Thinking = v.Thinking.Checked
	s.ContextPolicy = ui.TrimOldest
	if v.longChats.Selected == longChatAsk {
		s.ContextPolicy = ui.AskFirst
	}
	s.Hotkey = strings.TrimSpace(v.hotkey.Text)
	if h, err := ui.ParseHotkey(s.Hotkey); err == nil {
		s.Hotkey = h.String()
	}
	s.LaunchAtLogin = v.login.Checked
	s.ModelsDir = strings.TrimSpace(v.modelsDir.Text)
	s.LocalAPI = v.api.Checked
	num("API port", v.Port, &s.LocalAPIPort)
	num("Rounds per answer", v.toolRounds, &s.ToolRounds)
	if len(bad) > 0 {
		return s, fmt.Errorf("%s", strings.Join(bad, "; "))
	}
	return s, nil
}

// save stores the form and applies it; it reports whether it was stored.
func (v *View) save() bool {
	s, err := v.read()
	if err == nil {
		err = s.Validate(v.env.Budgets)
	}
	if err == nil {
		err = v.env.Settings.Save(s)
	}
	if err != nil {
		v.Status.Importance = widget.DangerImportance
		v.Status.SetText("Not saved: " + err.Error())
		return false
	}
	old := v.loaded
	v.loaded = s
	v.hotkey.SetText(s.Hotkey)
	if v.env.ApplySettings != nil {
		if err := v.env.ApplySettings(old, s); err != nil {
			v.Status.Importance = widget.WarningImportance
			v.Status.SetText("Saved, but " + err.Error())
			return true
		}
	}
	v.Status.Importance = widget.SuccessImportance
	v.Status.SetText("Saved.")
	return true
}

func containsValue(m map[string]string, v string) bool {
	for _, x := range m {
		if x == v {
			return true
		}
	}
	return false
}

// What the long-chats choice says.
const (
	longChatTrim = "Leave the oldest out of view"
	longChatAsk  = "Stop and ask me first"
)

// ShowHotkeyState says under the shortcut whether it works, and the command
// a desktop shortcut can run instead.
func (v *View) ShowHotkeyState() {
	e := v.env
	switch {
	case e.HotkeyActive != "":
		h, _ := ui.ParseHotkey(e.HotkeyActive)
		v.hotkeyNote.SetText(h.Label() + " opens Quick Ask from any app.")
	case e.HotkeyErr != nil:
		v.hotkeyNote.SetText("Not active: " + e.HotkeyErr.Error() + ".")
	default:
		v.hotkeyNote.SetText("")
	}
	if !look.OnMac {
		v.hotkeyNote.SetText(strings.TrimSpace(v.hotkeyNote.Text + " A desktop shortcut can also run: perch quick-ask"))
	}
}
