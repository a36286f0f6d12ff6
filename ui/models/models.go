package models

import (
	"fmt"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"perch/ui"
	"perch/ui/look"
)

// View lists the curated Gemma-4 models with their size, memory
// need, fit, download state and actions.
type View struct {
	env     *ui.Env
	win     fyne.Window
	list    *fyne.Container
	Rows    map[string]*modelRow
	Problem *look.ProblemBox
	Root    fyne.CanvasObject
}

func NewView(e *ui.Env, win fyne.Window) *View {
	v := &View{env: e, win: win, Rows: map[string]*modelRow{}}
	v.list = container.NewVBox()
	v.Problem = look.NewProblemBox()
	addFolder := widget.NewButtonWithIcon(look.PlatformText("Use a folder on this Mac…", "Use a folder on this computer…"), theme.FolderOpenIcon(), func() {
		dialog.ShowFolderOpen(func(u fyne.ListableURI, err error) {
			if err != nil || u == nil {
				return
			}
			v.useFolder(u.Path())
		}, win)
	})
	intro := widget.NewLabel("Gemma-4 runs entirely on this computer. Smaller models answer faster; larger ones know more. Models already in your Hugging Face cache show up as downloaded.")
	intro.Wrapping = fyne.TextWrapWord
	body := container.NewVBox(look.Heading("Models"), intro, v.Problem.Root, v.list, container.NewHBox(addFolder))
	v.Root = look.PageScroll(container.NewPadded(body))
	e.Catalog.Watch(func(m ui.CatalogModel) {
		e.Do(func() {
			if r, ok := v.Rows[m.ID]; ok {
				r.update(m)
			} else {
				v.Reload()
			}
		})
	})
	e.Model.Watch(func(ui.ModelState) { e.Do(v.Reload) })
	v.Reload()
	return v
}

func (v *View) Reload() {
	models, err := v.env.Catalog.Models()
	if err != nil {
		v.ShowErr(err)
		return
	}
	v.list.Objects = nil
	v.Rows = map[string]*modelRow{}
	for _, m := range models {
		r := newModelRow(v, m)
		v.Rows[m.ID] = r
		v.list.Add(r.root)
	}
	v.list.Refresh()
}

// ShowErr shows a failure above the list (nil clears it).
func (v *View) ShowErr(err error) { v.Problem.Show(err) }

func (v *View) useFolder(path string) {
	v.env.Run(func() {
		id, err := v.env.Catalog.AddFolder(path)
		if err == nil {
			err = v.env.Model.Use(id)
		}
		v.env.Do(func() {
			if err != nil {
				v.ShowErr(err)
				return
			}
			v.ShowErr(nil)
			v.Reload()
		})
	})
}

// modelRow is one model's card.
type modelRow struct {
	v        *View
	m        ui.CatalogModel
	root     *fyne.Container
	Title    *widget.Label
	Facts    *widget.Label
	badges   *fyne.Container
	progress *widget.ProgressBar
	rate     *widget.Label
	Problem  *look.ProblemBox
	Buttons  *fyne.Container
	dlBox    *fyne.Container
}

func newModelRow(v *View, m ui.CatalogModel) *modelRow {
	r := &modelRow{v: v}
	// Nothing in a card may widen the window: names (a folder's path) are
	// cut, the rest wraps.
	title := widget.NewLabelWithStyle(m.Name, fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	title.Truncation = fyne.TextTruncateEllipsis
	r.Title = title
	blurb := widget.NewLabel(m.Blurb)
	blurb.Importance = widget.LowImportance
	blurb.Wrapping = fyne.TextWrapWord
	r.Facts = widget.NewLabel("")
	r.Facts.Wrapping = fyne.TextWrapWord
	r.badges = container.NewHBox()
	r.progress = widget.NewProgressBar()
	r.rate = widget.NewLabel("")
	r.rate.Importance = widget.LowImportance
	r.Problem = look.NewProblemBox()
	r.dlBox = container.NewVBox(r.progress, r.rate, r.Problem.Root)
	r.Buttons = container.NewHBox()
	info := container.New(&look.TightVBox{}, container.New(look.NewTitleRow(title), title, r.badges), blurb, r.Facts)
	top := container.NewBorder(nil, nil, nil, container.NewCenter(r.Buttons), info)
	bg := canvas.NewRectangle(look.ThemeColor(look.ColorCard))
	bg.CornerRadius = 12
	bg.StrokeColor = look.ThemeColor(theme.ColorNameSeparator)
	bg.StrokeWidth = 1
	r.root = container.NewStack(bg, container.NewPadded(container.NewPadded(container.NewVBox(top, r.dlBox))))
	r.update(m)
	return r
}

func (r *modelRow) update(m ui.CatalogModel) {
	r.m = m
	active := r.v.env.Model.State()
	inUse := active.ID == m.ID
	r.badges.Objects = nil
	if m.Recommended {
		r.badges.Add(badge("Recommended", theme.ColorNamePrimary))
	}
	if inUse {
		r.badges.Add(badge("In use", theme.ColorNameSuccess))
	}
	r.badges.Refresh()

	fit := look.FitWords(m.Fit)
	var parts []string // a size not known is left out, never shown as 0 B
	if m.DiskBytes > 0 {
		parts = append(parts, ui.ByteSize(m.DiskBytes)+" on disk")
	}
	if m.RAMBytes > 0 {
		parts = append(parts, look.MemoryLine(m.RAMBytes, m.Budget))
	}
	if fit != "" {
		parts = append(parts, fit)
	}
	facts := strings.Join(append(parts, senses(m)), " · ")
	r.Facts.SetText(facts)
	switch m.Fit {
	case ui.TooBig:
		r.Facts.Importance = widget.DangerImportance
	case ui.FitsTight:
		r.Facts.Importance = widget.WarningImportance
	default:
		r.Facts.Importance = widget.MediumImportance
	}
	r.Facts.Refresh()

	r.Buttons.Objects = nil
	btn := func(label string, icon fyne.Resource, imp widget.Importance, f func()) {
		b := widget.NewButtonWithIcon(label, icon, f)
		b.Importance = imp
		r.Buttons.Add(b)
	}
	cat := r.v.env.Catalog
	d := m.Download
	switch {
	case d != nil && !d.Paused && d.Err == "":
		btn("Pause", theme.MediaPauseIcon(), widget.LowImportance, func() { cat.Pause(m.ID) })
		btn("Cancel", theme.CancelIcon(), widget.LowImportance, func() { cat.Cancel(m.ID) })
	case d != nil:
		btn(resumeLabel(*d), theme.DownloadIcon(), widget.HighImportance, func() { r.Start() })
		btn("Cancel", theme.CancelIcon(), widget.LowImportance, func() { cat.Cancel(m.ID) })
	case m.Downloaded:
		if !inUse {
			btn("Use this model", theme.ConfirmIcon(), widget.HighImportance, func() { r.use() })
		}
		btn("", theme.DeleteIcon(), widget.LowImportance, func() { r.confirmDelete() })
	default:
		imp := widget.MediumImportance
		if m.Recommended {
			imp = widget.HighImportance
		}
		btn("Download", theme.DownloadIcon(), imp, func() { r.Start() })
	}
	r.Buttons.Refresh()

	if d == nil {
		r.dlBox.Hide()
		return
	}
	r.dlBox.Show()
	if d.Total > 0 {
		r.progress.SetValue(float64(d.Done) / float64(d.Total))
	}
	// Before the first byte there is no size to show, only what went wrong.
	started := d.Total > 0 || d.Err == ""
	showIf(r.progress, started)
	showIf(r.rate, started)
	r.rate.SetText(downloadLine(*d))
	r.Problem.Set(d.Err, d.ErrDetails)
}

func (r *modelRow) Start() {
	id := r.m.ID
	r.v.env.Run(func() {
		err := r.v.env.Catalog.Download(id)
		r.v.env.Do(func() {
			if err != nil {
				r.v.ShowErr(err)
			} else {
				r.v.ShowErr(nil)
			}
		})
	})
}

func (r *modelRow) use() {
	id := r.m.ID
	r.v.env.Run(func() {
		err := r.v.env.Model.Use(id)
		r.v.env.Do(func() {
			if err != nil {
				r.v.ShowErr(err)
				return
			}
			r.v.ShowErr(nil)
			r.v.Reload()
		})
	})
}

func (r *modelRow) confirmDelete() {
	m := r.m
	dialog.ShowConfirm("Delete "+m.Name+"?",
		fmt.Sprintf("This frees %s. You can download it again later.", ui.ByteSize(m.DiskBytes)),
		func(ok bool) {
			if !ok {
				return
			}
			if err := r.v.env.Catalog.Delete(m.ID); err != nil {
				r.v.ShowErr(err)
				return
			}
			r.v.Reload()
		}, r.v.win)
}

// downloadLine is "1.2 GB of 3.1 GB · 24.0 MB/s · about 2 min left" (a
// failure is said beside it, by the problem box).
func downloadLine(d ui.DownloadState) string {
	s := fmt.Sprintf("%s of %s", ui.ByteSize(d.Done), ui.ByteSize(d.Total))
	if d.Err != "" {
		return s + " · stopped"
	}
	if d.Paused {
		return s + " · paused"
	}
	if d.BytesPerSec > 0 {
		s += " · " + ui.ByteSize(int64(d.BytesPerSec)) + "/s"
	}
	if d.ETA > 0 {
		s += " · " + look.ETA(d.ETA)
	}
	return s
}

func senses(m ui.CatalogModel) string {
	switch {
	case m.Audio && m.Vision:
		return "reads, sees and hears"
	case m.Vision:
		return "reads and sees"
	case m.Audio:
		return "reads and hears"
	}
	return "text only"
}

func badge(text string, c fyne.ThemeColorName) fyne.CanvasObject {
	bg := canvas.NewRectangle(look.ThemeColor(c))
	bg.CornerRadius = 8
	t := canvas.NewText(text, look.ThemeColor(theme.ColorNameForegroundOnPrimary))
	t.TextSize = theme.Size(theme.SizeNameCaptionText)
	t.TextStyle.Bold = true
	return container.NewCenter(container.NewStack(bg, container.New(layout.NewCustomPaddedLayout(2, 2, 8, 8), t)))
}

func showIf(o fyne.CanvasObject, show bool) {
	if show {
		o.Show()
	} else {
		o.Hide()
	}
}

// resumeLabel is the button for a download that stopped: "Resume" only
// when something was downloaded to resume from; after a failure before the
// first byte (offline), "Try again".
func resumeLabel(d ui.DownloadState) string {
	switch {
	case d.Done > 0:
		return "Resume"
	case d.Err != "":
		return "Try again"
	}
	return "Download"
}
