package models

import (
	"fmt"

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

// FirstRun is the welcome panel shown in place of the chat until a model is
// available: it offers the recommended model or a local folder and shows
// the download's progress.
type FirstRun struct {
	env      *ui.Env
	win      fyne.Window
	rec      ui.CatalogModel
	Intro    *widget.Label
	Title    *widget.Label
	detail   *widget.Label
	Progress *widget.ProgressBar
	Rate     *widget.Label
	Problem  *look.ProblemBox
	Download *widget.Button
	folder   *widget.Button
	Root     fyne.CanvasObject
	using    bool // Use was called for the finished download
}

func NewFirstRun(e *ui.Env, win fyne.Window) *FirstRun {
	f := &FirstRun{env: e, win: win}
	welcome := widget.NewRichText(&widget.TextSegment{Text: "Welcome to Perch",
		Style: widget.RichTextStyle{Alignment: fyne.TextAlignCenter, SizeName: theme.SizeNameHeadingText, TextStyle: fyne.TextStyle{Bold: true}}})
	intro := widget.NewLabelWithStyle("Perch chats with Google's Gemma right on this computer. Nothing you type, show or say leaves it. To begin, get a model.",
		fyne.TextAlignCenter, fyne.TextStyle{})
	intro.Wrapping = fyne.TextWrapWord
	f.Intro = intro
	f.Title = widget.NewLabelWithStyle("", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	f.detail = widget.NewLabel("")
	f.detail.Wrapping = fyne.TextWrapWord
	f.Progress = widget.NewProgressBar()
	f.Progress.Hide()
	f.Rate = widget.NewLabel("")
	f.Rate.Importance = widget.LowImportance
	f.Rate.Hide()
	f.Problem = look.NewProblemBox()
	f.Download = widget.NewButtonWithIcon("Download", theme.DownloadIcon(), f.start)
	f.Download.Importance = widget.HighImportance
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
		container.NewHBox(f.Title, badge("Recommended", theme.ColorNamePrimary)),
		f.detail, f.Progress, f.Rate, f.Problem.Root,
		container.NewHBox(f.Download, layout.NewSpacer(), f.folder)))))
	var top []fyne.CanvasObject
	if e.Icon != nil {
		icon := canvas.NewImageFromResource(e.Icon)
		icon.FillMode = canvas.ImageFillContain
		icon.SetMinSize(fyne.NewSquareSize(96))
		top = append(top, container.NewCenter(icon))
	}
	top = append(top, welcome, intro, layout.NewSpacer(), card)
	f.Root = container.New(&look.MaxWidth{Width: 520}, container.NewVBox(top...))
	e.Catalog.Watch(func(m ui.CatalogModel) {
		e.Do(func() {
			if m.ID == f.rec.ID {
				f.show(m)
			}
		})
	})
	f.refresh()
	return f
}

// refresh picks the recommended model from the catalog.
func (f *FirstRun) refresh() {
	models, err := f.env.Catalog.Models()
	if err != nil {
		f.Problem.Show(err)
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

func (f *FirstRun) show(m ui.CatalogModel) {
	f.rec = m
	if m.ID == "" {
		f.Title.SetText("No models in the catalog")
		f.Download.Hide()
		return
	}
	f.Title.SetText(m.Name)
	f.detail.SetText(fmt.Sprintf("%s. %s download, needs about %s of memory.", m.Blurb, ui.ByteSize(m.DiskBytes), ui.ByteSize(m.RAMBytes)))
	f.Problem.Show(nil)
	d := m.Download
	switch {
	case m.Downloaded:
		f.Progress.Hide()
		setOrHide(f.Rate, "Ready. Loading…")
		f.Download.Hide()
		if !f.using && f.env.Model.State().ID == "" {
			f.using = true
			id := m.ID
			f.env.Run(func() {
				if err := f.env.Model.Use(id); err != nil {
					f.env.Do(func() { f.Problem.Show(err) })
				}
			})
		}
	case d != nil:
		if d.Total > 0 {
			f.Progress.SetValue(float64(d.Done) / float64(d.Total))
		}
		// Before the first byte there is no size to show, only what went wrong.
		started := d.Total > 0 || d.Err == ""
		showIf(f.Progress, started)
		if !started {
			setOrHide(f.Rate, "")
		} else {
			setOrHide(f.Rate, downloadLine(*d))
		}
		f.Problem.Set(d.Err, d.ErrDetails)
		if d.Paused || d.Err != "" {
			f.Download.SetText(resumeLabel(*d))
			f.Download.Show()
		} else {
			f.Download.Hide()
		}
	default:
		f.Progress.Hide()
		setOrHide(f.Rate, "")
		f.Download.SetText(fmt.Sprintf("Download (%s)", ui.ByteSize(m.DiskBytes)))
		f.Download.Show()
	}
}

func (f *FirstRun) start() {
	id := f.rec.ID
	f.env.Run(func() {
		err := f.env.Catalog.Download(id)
		f.env.Do(func() {
			if err != nil {
				f.Problem.Show(err)
			}
		})
	})
}

func (f *FirstRun) useFolder(path string) {
	f.env.Run(func() {
		id, err := f.env.Catalog.AddFolder(path)
		if err == nil {
			err = f.env.Model.Use(id)
		}
		if err != nil {
			f.env.Do(func() { f.Problem.Show(err) })
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
