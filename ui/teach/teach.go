package teach

import (
	"fmt"
	"strings"
	"sync/atomic"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"perch/ui"
	"perch/ui/look"
)

// View is the Teach page: the run going on (live chart, controls),
// a form to start a new one, the adapters the user owns and past runs.
type View struct {
	env    *ui.Env
	win    fyne.Window
	Root   fyne.CanvasObject
	Scroll *container.Scroll // root: the page scrolls as one

	base         *widget.Select
	baseIDs      map[string]string // shown name → id
	fromFeedback *widget.Check
	folder       string
	folderLabel  *widget.Label
	clearFolder  *widget.Button
	dataInfo     *widget.Label
	previewBtn   *widget.Button
	method       *widget.RadioGroup
	methodHint   *widget.Label
	Fields       map[string]*widget.Entry // planFields by name
	Advanced     *widget.Accordion
	Problem      *widget.Label // why it cannot start
	Estimate     *widget.Label
	Start        *widget.Button

	Run      *runPanel
	adapters *adaptersView
	runs     *runsList

	summary  ui.DataSummary
	plan     ui.TrainPlan
	Ready    bool         // the last check passed
	Checking atomic.Int64 // generation of the latest check
	Checked  int64        // generation of the check shown (UI goroutine)
	// autoSteps is the Steps value Perch suggested; while the field holds
	// it, it follows the data (about three passes).
	autoSteps string
}

func NewView(e *ui.Env, win fyne.Window) *View {
	v := &View{env: e, win: win, baseIDs: map[string]string{}, Fields: map[string]*widget.Entry{}}
	d := defaultPlan()
	v.base = widget.NewSelect(nil, func(string) { v.Check() })
	v.base.PlaceHolder = "No model downloaded yet"
	v.fromFeedback = widget.NewCheck("My feedback in chats", func(bool) { v.Check() })
	v.fromFeedback.Checked = true
	v.folderLabel = widget.NewLabel("")
	v.folderLabel.Truncation = fyne.TextTruncateEllipsis
	choose := widget.NewButtonWithIcon("Add a folder of JSONL files…", theme.FolderOpenIcon(), v.chooseFolder)
	choose.Importance = widget.LowImportance
	v.clearFolder = widget.NewButtonWithIcon("", theme.CancelIcon(), func() { v.setFolder("") })
	v.clearFolder.Importance = widget.LowImportance
	v.clearFolder.Hide()
	v.dataInfo = widget.NewLabel("")
	v.dataInfo.Wrapping = fyne.TextWrapWord
	v.previewBtn = widget.NewButtonWithIcon("Preview", theme.VisibilityIcon(), v.showPreview)
	v.previewBtn.Importance = widget.LowImportance

	var labels []string
	for _, p := range methodPresets {
		labels = append(labels, p.Label)
	}
	v.methodHint = widget.NewLabel("")
	v.methodHint.Wrapping = fyne.TextWrapWord
	v.methodHint.Importance = widget.LowImportance
	v.method = widget.NewRadioGroup(labels, func(string) { v.methodChanged() })
	v.method.Required = true

	entry := func(key, value string) *widget.Entry {
		en := look.FieldEntry()
		en.SetText(value)
		en.OnChanged = func(string) { v.Check() }
		v.Fields[key] = en
		return en
	}
	name := entry("name", d.Name)
	steps := entry("steps", fmt.Sprint(d.Steps))
	v.autoSteps = steps.Text
	adv := widget.NewForm(
		widget.NewFormItem("LoRA+ ratio", entry("ratio", fmt.Sprint(d.LoRAPlusRatio))),
		widget.NewFormItem("Rank", entry("rank", fmt.Sprint(d.Rank))),
		widget.NewFormItem("Learning rate", entry("lr", fmt.Sprint(d.LearningRate))),
		widget.NewFormItem("Validation share (%)", entry("val", fmt.Sprint(d.ValShare*100))),
		widget.NewFormItem("Batch size", entry("batch", fmt.Sprint(d.BatchSize))),
		widget.NewFormItem("Maximum length (tokens)", entry("maxlen", fmt.Sprint(d.MaxSeqLen))),
		widget.NewFormItem("DPO beta", entry("beta", fmt.Sprint(d.Beta))),
		widget.NewFormItem("ORPO lambda", entry("lambda", fmt.Sprint(d.Lambda))),
	)
	ratioNote := widget.NewLabel(fmt.Sprintf("LoRA+ ratio %g: each adapter's B matrices learn this many times faster than its A matrices (1 is plain LoRA, which Perch's width study found as fast as LoRA+ at its best rate). The learning rate is A's.", float64(ui.DefaultLoRAPlusRatio)))
	ratioNote.Wrapping = fyne.TextWrapWord
	ratioNote.Importance = widget.LowImportance
	v.Advanced = widget.NewAccordion(widget.NewAccordionItem("Advanced", container.NewVBox(ratioNote, adv)))

	v.Problem = widget.NewLabel("")
	v.Problem.Wrapping = fyne.TextWrapWord
	v.Problem.Importance = widget.DangerImportance
	v.Problem.Hide()
	v.Estimate = widget.NewLabel("")
	v.Estimate.Wrapping = fyne.TextWrapWord
	v.Start = widget.NewButtonWithIcon("Start training", theme.MediaPlayIcon(), v.startRun)
	v.Start.Importance = widget.HighImportance
	v.Start.Disable()

	form := widget.NewForm(
		widget.NewFormItem("Base model", v.base),
		widget.NewFormItem("Learn from", container.NewVBox(v.fromFeedback,
			container.NewBorder(nil, nil, choose, v.clearFolder, v.folderLabel),
			container.NewBorder(nil, nil, nil, v.previewBtn, v.dataInfo))),
		widget.NewFormItem("Method", container.NewVBox(v.method, v.methodHint)),
		widget.NewFormItem("Adapter name", name),
		widget.NewFormItem("Steps", steps),
	)
	v.Run = newRunPanel(e, win)
	v.adapters = newAdaptersView(e, win)
	v.runs = newRunsList(e, func(r ui.TrainRun) { v.Run.Follow(r) })
	intro := widget.NewLabel("Teach Gemma to answer the way you want, from your own feedback or files. Training runs on this computer and makes an adapter you can switch on in any chat; you can keep chatting meanwhile.")
	intro.Wrapping = fyne.TextWrapWord
	newRun := container.NewVBox(form, v.Advanced, v.Problem, v.Estimate, container.NewHBox(layout.NewSpacer(), v.Start))
	body := container.NewVBox(look.Heading("Teach"), intro, v.Run.Root,
		look.Section("New run", card(newRun)),
		look.Section("Your adapters", v.adapters.root),
		look.Section("Past runs", v.runs.root))
	v.Run.parent = body
	v.Scroll = look.PageScroll(container.NewPadded(body))
	v.Root = v.Scroll
	v.method.SetSelected(presetFor(d.Method).Label)
	e.Teacher.Watch(func(u ui.TrainUpdate) { v.Run.push(u) })
	v.Run.onStarted = v.Check
	v.Run.onFinished = func() {
		v.adapters.reload()
		v.runs.reload()
		v.Check()
	}
	return v
}

// Reload refreshes everything the page shows from the services.
func (v *View) Reload() {
	bases, err := v.env.Teacher.Bases()
	var names []string
	v.baseIDs = map[string]string{}
	current := v.env.Model.State().ID
	sel := ""
	for _, b := range bases {
		names = append(names, b.Name)
		v.baseIDs[b.Name] = b.ID
		if b.ID == current || sel == "" {
			sel = b.Name
		}
	}
	if v.base.Selected != "" && v.baseIDs[v.base.Selected] != "" {
		sel = v.base.Selected
	}
	v.base.Options = names
	v.base.Selected = sel
	v.base.Refresh()
	if err != nil {
		v.showProblem("Could not list models: " + err.Error())
	}
	v.adapters.reload()
	v.runs.reload()
	v.Run.restore()
	v.Check()
}

func (v *View) methodChanged() {
	m := v.selectedMethod()
	p := presetFor(m)
	v.methodHint.SetText(p.Hint)
	// A learning rate still at another method's default follows the method.
	lr := v.Fields["lr"]
	for _, o := range methodPresets {
		if strings.TrimSpace(lr.Text) == fmt.Sprint(o.LR) && o.LR != p.LR {
			lr.SetText(fmt.Sprint(p.LR))
			break
		}
	}
	v.Check()
}

func (v *View) selectedMethod() ui.TrainMethod {
	for _, p := range methodPresets {
		if p.Label == v.method.Selected {
			return p.Method
		}
	}
	return ui.MethodDPO
}

func (v *View) source() ui.TeachSource {
	return ui.TeachSource{Feedback: v.fromFeedback.Checked, Folder: v.folder}
}

func (v *View) chooseFolder() {
	dialog.ShowFolderOpen(func(u fyne.ListableURI, err error) {
		if err == nil && u != nil {
			v.setFolder(u.Path())
		}
	}, v.win)
}

// setFolder adds (or with "" removes) a dataset folder.
func (v *View) setFolder(path string) {
	v.folder = path
	v.folderLabel.SetText(path)
	if path == "" {
		v.clearFolder.Hide()
	} else {
		v.clearFolder.Show()
	}
	v.Check()
}

func (v *View) fieldValues() planFields {
	f := func(k string) string { return v.Fields[k].Text }
	return planFields{Name: f("name"), Steps: f("steps"), Rank: f("rank"), LR: f("lr"), Ratio: f("ratio"),
		ValShare: f("val"), Batch: f("batch"), MaxLen: f("maxlen"), Beta: f("beta"), Lambda: f("lambda")}
}

// Check validates the form, then asks the teacher (off the UI goroutine)
// what the data gives and what the plan costs; the newest check wins.
func (v *View) Check() {
	if v.Start == nil {
		return // still building
	}
	gen := v.Checking.Add(1)
	v.Ready = false
	v.Start.Disable()
	src, m := v.source(), v.selectedMethod()
	plan, perr := parsePlan(v.baseIDs[v.base.Selected], src, m, v.fieldValues())
	v.env.Run(func() {
		var sum ui.DataSummary
		var serr error
		if src.Feedback || src.Folder != "" {
			sum, serr = v.env.Teacher.Summarize(src, plan.ValShare)
		}
		var est ui.TrainEstimate
		var eerr error
		empty := nothingToLearn(sum, m, src)
		if perr == nil && serr == nil && empty == "" {
			est, eerr = v.env.Teacher.Estimate(plan)
		}
		v.env.Do(func() {
			if v.Checking.Load() != gen {
				return
			}
			v.Checked = gen
			v.summary = sum
			if f := v.Fields["steps"]; f.Text == v.autoSteps && serr == nil && sum.Usable(m) > 0 {
				if n := fmt.Sprint(suggestSteps(sum.Usable(m)-int(float64(sum.Usable(m))*plan.ValShare), max(plan.BatchSize, 1))); n != f.Text {
					v.autoSteps = n
					f.SetText(n) // checks again
					return
				}
			}
			v.showData(sum, serr)
			switch {
			case perr != nil:
				v.showProblem(perr.Error())
			case serr != nil:
				v.showProblem(serr.Error())
			case empty != "":
				v.showProblem(empty)
			case eerr != nil:
				v.showProblem(eerr.Error())
			case !est.Fits:
				v.showProblem(est.Reason)
				v.Estimate.SetText(EstimateLine(est))
				v.Estimate.Show()
			default:
				v.showProblem("")
				v.Estimate.SetText(EstimateLine(est) + "\n" + est.Basis)
				v.Estimate.Show()
				if v.Run.active() {
					v.Estimate.SetText(v.Estimate.Text + "\nOne run at a time: start this one when the current run ends, or stop it.")
					return
				}
				v.plan, v.Ready = plan, true
				v.Start.Enable()
			}
		})
	})
}

func (v *View) showData(d ui.DataSummary, err error) {
	src := v.source()
	switch {
	case err != nil:
		v.dataInfo.SetText("")
	case !src.Feedback && src.Folder == "":
		v.dataInfo.SetText("Nothing chosen.")
	default:
		text := dataLine(d)
		if len(d.Notes) > 0 {
			text += "\n" + strings.Join(d.Notes, "\n")
		}
		v.dataInfo.SetText(text)
	}
	if len(d.Preview) > 0 {
		v.previewBtn.Enable()
	} else {
		v.previewBtn.Disable()
	}
}

func (v *View) showProblem(msg string) {
	if msg == "" {
		v.Problem.Hide()
		return
	}
	v.Problem.SetText(msg)
	v.Problem.Show()
	v.Estimate.Hide()
}

func (v *View) startRun() {
	if !v.Ready {
		return
	}
	plan := v.plan
	v.Start.Disable()
	v.env.Run(func() {
		r, err := v.env.Teacher.Start(plan)
		v.env.Do(func() {
			if err != nil {
				v.showProblem(err.Error())
				v.Start.Enable()
				return
			}
			v.Run.Follow(r)
			v.Scroll.ScrollToTop() // the new run's card, at the top, is what happens next
			v.runs.reload()
			v.Check()
		})
	})
}

// showPreview lists a few of the rows the feedback and folder give.
func (v *View) showPreview() {
	box := container.NewVBox()
	for _, p := range v.summary.Preview {
		box.Add(PreviewCard(p))
	}
	scroll := container.NewVScroll(box)
	scroll.SetMinSize(fyne.NewSize(620, 420))
	dialog.ShowCustom("What Perch will learn from", "Close", scroll, v.win)
}

func PreviewCard(p ui.DataPreview) fyne.CanvasObject {
	line := func(label, text string, imp widget.Importance) fyne.CanvasObject {
		l := widget.NewLabel(label + " " + look.Clip(look.ShownText(text), 400))
		l.Wrapping = fyne.TextWrapWord
		l.Importance = imp
		return l
	}
	rows := []fyne.CanvasObject{look.Caption(p.Origin), line("You:", p.Prompt, widget.MediumImportance)}
	if p.Media > 0 {
		rows = append(rows, look.Caption(fmt.Sprintf("with %d %s", p.Media, plural(p.Media, "attachment", "attachments"))))
	}
	if p.Rejected != "" {
		rows = append(rows, line("Better:", p.Chosen, widget.SuccessImportance), line("Worse:", p.Rejected, widget.DangerImportance))
	} else {
		rows = append(rows, line("Answer:", p.Chosen, widget.SuccessImportance))
	}
	return card(container.NewVBox(rows...))
}
