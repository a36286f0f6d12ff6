package teach

import (
	"fmt"
	"math"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"perch/ui"
	"perch/ui/look"
)

// adaptersView lists the adapters the user owns: what each is, and
// rename, export, delete; import adds one made elsewhere (mlx-lm).
type adaptersView struct {
	env    *ui.Env
	win    fyne.Window
	list   *fyne.Container
	status *widget.Label
	items  []ui.AdapterInfo
	root   fyne.CanvasObject
}

func newAdaptersView(e *ui.Env, win fyne.Window) *adaptersView {
	v := &adaptersView{env: e, win: win, list: container.NewVBox()}
	v.status = widget.NewLabel("")
	v.status.Wrapping = fyne.TextWrapWord
	v.status.Hide()
	imp := widget.NewButtonWithIcon("Import an mlx-lm adapter folder…", theme.FolderOpenIcon(), func() {
		dialog.ShowFolderOpen(func(u fyne.ListableURI, err error) {
			if err == nil && u != nil {
				v.importFolder(u.Path())
			}
		}, win)
	})
	imp.Importance = widget.LowImportance
	v.root = container.NewVBox(v.list, v.status, container.NewHBox(imp))
	return v
}

func (v *adaptersView) reload() {
	if v.env.Adapters == nil {
		return
	}
	items, err := v.env.Adapters.Adapters()
	if err != nil {
		v.say("Could not list adapters: "+err.Error(), widget.DangerImportance)
		return
	}
	v.items = items
	v.list.Objects = nil
	if len(items) == 0 {
		l := widget.NewLabel("None yet. A run makes one; you can also import an adapter trained with mlx-lm.")
		l.Wrapping = fyne.TextWrapWord
		l.Importance = widget.LowImportance
		v.list.Add(l)
	}
	for _, a := range items {
		v.list.Add(v.row(a))
	}
	v.list.Refresh()
}

// adapterFacts is "DPO on Gemma-4 E2B · 29 Nov 2026 · 200 steps · best
// validation loss 1.234 (step 150) · rank 8 · 12.0 MB".
func adapterFacts(a ui.AdapterInfo) string {
	var parts []string
	on := "for " + a.BaseName
	if a.Method != "" {
		on = strings.ToUpper(string(a.Method)) + " on " + a.BaseName
	}
	parts = append(parts, on, when(a.Created))
	if a.Steps > 0 {
		parts = append(parts, fmt.Sprintf("%d steps", a.Steps))
	}
	if !math.IsNaN(a.BestVal) && a.BestStep > 0 {
		parts = append(parts, fmt.Sprintf("best validation loss %s (checkpoint at step %d)", lossText(a.BestVal), a.BestStep))
	}
	if a.Rank > 0 {
		parts = append(parts, fmt.Sprintf("rank %d", a.Rank))
	}
	parts = append(parts, ui.ByteSize(a.Size))
	return strings.Join(parts, " · ")
}

func (v *adaptersView) row(a ui.AdapterInfo) fyne.CanvasObject {
	name := widget.NewLabelWithStyle(a.Name, fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	facts := widget.NewLabel(adapterFacts(a))
	facts.Wrapping = fyne.TextWrapWord
	facts.Importance = widget.LowImportance
	btn := func(label string, icon fyne.Resource, f func()) *widget.Button {
		b := widget.NewButtonWithIcon(label, icon, f)
		b.Importance = widget.LowImportance
		return b
	}
	buttons := container.NewHBox(
		btn("Rename", theme.DocumentCreateIcon(), func() { v.rename(a) }),
		btn("Export", theme.DocumentSaveIcon(), func() { v.export(a) }),
		btn("", theme.DeleteIcon(), func() { v.confirmDelete(a) }))
	return card(container.NewBorder(nil, nil, nil, container.NewCenter(buttons), container.New(&look.TightVBox{}, name, facts)))
}

func (v *adaptersView) say(msg string, imp widget.Importance) {
	if msg == "" {
		v.status.Hide()
		return
	}
	v.status.Importance = imp
	v.status.SetText(msg)
	v.status.Show()
}

// act runs f off the UI goroutine, then shows its outcome and reloads.
func (v *adaptersView) act(f func() (string, error)) {
	v.env.Run(func() {
		msg, err := f()
		v.env.Do(func() {
			if err != nil {
				v.say(err.Error(), widget.DangerImportance)
			} else {
				v.say(msg, widget.SuccessImportance)
			}
			v.reload()
		})
	})
}

func (v *adaptersView) rename(a ui.AdapterInfo) {
	e := widget.NewEntry()
	e.SetText(a.Name)
	e.Validator = checkAdapterName
	dialog.ShowForm("Rename "+a.Name, "Rename", "Cancel", []*widget.FormItem{widget.NewFormItem("Name", e)}, func(ok bool) {
		if !ok {
			return
		}
		name := strings.TrimSpace(e.Text)
		v.act(func() (string, error) { return "", v.env.Adapters.RenameAdapter(a.ID, name) })
	}, v.win)
}

func (v *adaptersView) export(a ui.AdapterInfo) {
	dialog.ShowFolderOpen(func(u fyne.ListableURI, err error) {
		if err != nil || u == nil {
			return
		}
		dir := u.Path()
		v.act(func() (string, error) {
			out, err := v.env.Adapters.ExportAdapter(a.ID, dir)
			what := "Exported"
			if !math.IsNaN(a.BestVal) && a.BestStep > 0 && a.BestStep < a.Steps {
				what = fmt.Sprintf("Exported the checkpoint at step %d (the lowest validation loss)", a.BestStep)
			}
			return what + " to " + out + " (mlx-lm's adapters.safetensors and adapter_config.json).", err
		})
	}, v.win)
}

func (v *adaptersView) confirmDelete(a ui.AdapterInfo) {
	dialog.ShowConfirm("Delete "+a.Name+"?",
		fmt.Sprintf("This frees %s. Chats that use it go back to the base model.", ui.ByteSize(a.Size)),
		func(ok bool) {
			if ok {
				v.act(func() (string, error) { return "", v.env.Adapters.DeleteAdapter(a.ID) })
			}
		}, v.win)
}

func (v *adaptersView) importFolder(dir string) {
	v.act(func() (string, error) {
		a, err := v.env.Adapters.ImportAdapter(dir)
		return fmt.Sprintf("Imported %s (%s).", a.Name, adapterFacts(a)), err
	})
}

// runsList is the run history: each run's state, with the way back to it.
type runsList struct {
	env  *ui.Env
	list *fyne.Container
	open func(ui.TrainRun)
	root fyne.CanvasObject
}

func newRunsList(e *ui.Env, open func(ui.TrainRun)) *runsList {
	l := &runsList{env: e, list: container.NewVBox(), open: open}
	l.root = l.list
	return l
}

func (l *runsList) reload() {
	runs, err := l.env.Teacher.Runs()
	l.list.Objects = nil
	if err != nil {
		l.list.Add(widget.NewLabel("Could not read past runs: " + err.Error()))
	}
	if err == nil && len(runs) == 0 {
		none := widget.NewLabel("No runs yet.")
		none.Importance = widget.LowImportance
		l.list.Add(none)
	}
	for _, r := range runs {
		r := r
		title := widget.NewLabel(fmt.Sprintf("%s · %s · %s", r.Plan.Name, strings.ToUpper(string(r.Plan.Method)), when(r.Started)))
		// A label (not bare text): indented like the title, and wrapped
		// rather than cut at the card's edge.
		state := widget.NewLabel(runStateLine(r))
		state.Importance, state.SizeName, state.Wrapping = widget.LowImportance, theme.SizeNameCaptionText, fyne.TextWrapWord
		show := widget.NewButtonWithIcon("Show", theme.VisibilityIcon(), func() { l.open(r) })
		show.Importance = widget.LowImportance
		l.list.Add(container.NewBorder(nil, nil, nil, show, container.New(&look.TightVBox{}, title, state)))
	}
	l.list.Refresh()
}
