package window

import (
	"perch/ui"
	"perch/ui/look"

	"fmt"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// firstRun is the welcome panel shown in place of the chat until a model is
// available: it offers the recommended model or a local folder and shows
// the download's progress.
type firstRun struct {
	env      *env
	win      fyne.Window
	rec      ui.CatalogModel
	intro    *widget.Label
	title    *widget.Label
	detail   *widget.Label
	progress *widget.ProgressBar
	rate     *widget.Label
	problem  *look.ProblemBox
	download *widget.Button
	folder   *widget.Button
	root     fyne.CanvasObject
	using    bool // Use was called for the finished download
}

func newFirstRun(e *env, win fyne.Window) *firstRun {
	f := &firstRun{env: e, win: win}
	welcome := widget.NewRichText(&widget.TextSegment{Text: "Welcome to Perch",
		Style: widget.RichTextStyle{Alignment: fyne.TextAlignCenter, SizeName: theme.SizeNameHeadingText, TextStyle: fyne.TextStyle{Bold: true}}})
	intro := widget.NewLabelWithStyle("Perch chats with Google's Gemma right on this computer. Nothing you type, show or say leaves it. To begin, get a model.",
		fyne.TextAlignCenter, fyne.TextStyle{})
	intro.Wrapping = fyne.TextWrapWord
	f.intro = intro
	f.title = widget.NewLabelWithStyle("", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	f.detail = widget.NewLabel("")
	f.detail.Wrapping = fyne.TextWrapWord
	f.progress = widget.NewProgressBar()
	f.progress.Hide()
	f.rate = widget.NewLabel("")
	f.rate.Importance = widget.LowImportance
	f.rate.Hide()
	f.problem = look.NewProblemBox()
	f.download = widget.NewButtonWithIcon("Download", theme.DownloadIcon(), f.start)
	f.download.Importance = widget.HighImportance
	f.folder = widget.NewButtonWithIcon("Use a model folder…", theme.FolderOpenIcon(), func() {
		dialog.ShowFolderOpen(func(u fyne.ListableURI, err error) {
			if err == nil && u != nil {
				f.useFolder(u.Path())
			}
		}, win)
	})
	f.folder.Importance = widget.LowImportance
	bg := canvas.NewRectangle(look.ThemeColor(look.ColorCard))
	bg.CornerRadius = 12
	bg.StrokeColor = look.ThemeColor(theme.ColorNameSeparator)
	bg.StrokeWidth = 1
	card := container.NewStack(bg, container.NewPadded(container.NewPadded(container.NewVBox(
		container.NewHBox(f.title, badge("Recommended", theme.ColorNamePrimary)),
		f.detail, f.progress, f.rate, f.problem.Root,
		container.NewHBox(f.download, layout.NewSpacer(), f.folder)))))
	var top []fyne.CanvasObject
	if e.icon != nil {
		icon := canvas.NewImageFromResource(e.icon)
		icon.FillMode = canvas.ImageFillContain
		icon.SetMinSize(fyne.NewSquareSize(96))
		top = append(top, container.NewCenter(icon))
	}
	top = append(top, welcome, intro, layout.NewSpacer(), card)
	f.root = container.New(&look.MaxWidth{Width: 520}, container.NewVBox(top...))
	e.catalog.Watch(func(m ui.CatalogModel) {
		e.do(func() {
			if m.ID == f.rec.ID {
				f.show(m)
			}
		})
	})
	f.refresh()
	return f
}

// refresh picks the recommended model from the catalog.
func (f *firstRun) refresh() {
	models, err := f.env.catalog.Models()
	if err != nil {
		f.problem.Show(err)
		return
	}
	for _, m := range models {
		if m.Recommended || f.rec.ID == "" {
			f.rec = m
		}
		if m.Recommended {
			break
		}
	}
	f.show(f.rec)
}

func (f *firstRun) show(m ui.CatalogModel) {
	f.rec = m
	if m.ID == "" {
		f.title.SetText("No models in the catalog")
		f.download.Hide()
		return
	}
	f.title.SetText(m.Name)
	f.detail.SetText(fmt.Sprintf("%s. %s download, needs about %s of memory.", m.Blurb, ui.ByteSize(m.DiskBytes), ui.ByteSize(m.RAMBytes)))
	f.problem.Show(nil)
	d := m.Download
	switch {
	case m.Downloaded:
		f.progress.Hide()
		setOrHide(f.rate, "Ready. Loading…")
		f.download.Hide()
		if !f.using && f.env.model.State().ID == "" {
			f.using = true
			id := m.ID
			f.env.run(func() {
				if err := f.env.model.Use(id); err != nil {
					f.env.do(func() { f.problem.Show(err) })
				}
			})
		}
	case d != nil:
		if d.Total > 0 {
			f.progress.SetValue(float64(d.Done) / float64(d.Total))
		}
		// Before the first byte there is no size to show, only what went wrong.
		started := d.Total > 0 || d.Err == ""
		showIf(f.progress, started)
		if !started {
			setOrHide(f.rate, "")
		} else {
			setOrHide(f.rate, downloadLine(*d))
		}
		f.problem.Set(d.Err, d.ErrDetails)
		if d.Paused || d.Err != "" {
			f.download.SetText(resumeLabel(*d))
			f.download.Show()
		} else {
			f.download.Hide()
		}
	default:
		f.progress.Hide()
		setOrHide(f.rate, "")
		f.download.SetText(fmt.Sprintf("Download (%s)", ui.ByteSize(m.DiskBytes)))
		f.download.Show()
	}
}

func (f *firstRun) start() {
	id := f.rec.ID
	f.env.run(func() {
		err := f.env.catalog.Download(id)
		f.env.do(func() {
			if err != nil {
				f.problem.Show(err)
			}
		})
	})
}

func (f *firstRun) useFolder(path string) {
	f.env.run(func() {
		id, err := f.env.catalog.AddFolder(path)
		if err == nil {
			err = f.env.model.Use(id)
		}
		if err != nil {
			f.env.do(func() { f.problem.Show(err) })
		}
	})
}

// setOrHide shows text in l, or hides l when text is empty.
func setOrHide(l *widget.Label, text string) {
	l.SetText(text)
	if text == "" {
		l.Hide()
	} else {
		l.Show()
	}
}
