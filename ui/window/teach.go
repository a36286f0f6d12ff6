package window

import (
	"perch/ui"
	"perch/ui/look"

	"fmt"
	"strings"
	"sync/atomic"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// teachView is the Teach page: the run going on (live chart, controls),
// a form to start a new one, the adapters the user owns and past runs.
type teachView struct {
	env    *env
	win    fyne.Window
	root   fyne.CanvasObject
	scroll *container.Scroll // root: the page scrolls as one

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
	fields       map[string]*widget.Entry // planFields by name
	advanced     *widget.Accordion
	problem      *widget.Label // why it cannot start
	estimate     *widget.Label
	start        *widget.Button

	run      *runPanel
	adapters *adaptersView
	runs     *runsList

	summary  ui.DataSummary
	plan     ui.TrainPlan
	ready    bool         // the last check passed
	checking atomic.Int64 // generation of the latest check
	checked  int64        // generation of the check shown (UI goroutine)
	// autoSteps is the Steps value Perch suggested; while the field holds
	// it, it follows the data (about three passes).
	autoSteps string
}

func newTeachView(e *env, win fyne.Window) *teachView {
	v := &teachView{env: e, win: win, baseIDs: map[string]string{}, fields: map[string]*widget.Entry{}}
	d := defaultPlan()
	v.base = widget.NewSelect(nil, func(string) { v.check() })
	v.base.PlaceHolder = "No model downloaded yet"
	v.fromFeedback = widget.NewCheck("My feedback in chats", func(bool) { v.check() })
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
		en.OnChanged = func(string) { v.check() }
		v.fields[key] = en
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
	v.advanced = widget.NewAccordion(widget.NewAccordionItem("Advanced", container.NewVBox(ratioNote, adv)))

	v.problem = widget.NewLabel("")
	v.problem.Wrapping = fyne.TextWrapWord
	v.problem.Importance = widget.DangerImportance
	v.problem.Hide()
	v.estimate = widget.NewLabel("")
	v.estimate.Wrapping = fyne.TextWrapWord
	v.start = widget.NewButtonWithIcon("Start training", theme.MediaPlayIcon(), v.startRun)
	v.start.Importance = widget.HighImportance
	v.start.Disable()

	form := widget.NewForm(
		widget.NewFormItem("Base model", v.base),
		widget.NewFormItem("Learn from", container.NewVBox(v.fromFeedback,
			container.NewBorder(nil, nil, choose, v.clearFolder, v.folderLabel),
			container.NewBorder(nil, nil, nil, v.previewBtn, v.dataInfo))),
		widget.NewFormItem("Method", container.NewVBox(v.method, v.methodHint)),
		widget.NewFormItem("Adapter name", name),
		widget.NewFormItem("Steps", steps),
	)
	v.run = newRunPanel(e, win)
	v.adapters = newAdaptersView(e, win)
	v.runs = newRunsList(e, func(r ui.TrainRun) { v.run.follow(r) })
	intro := widget.NewLabel("Teach Gemma to answer the way you want, from your own feedback or files. Training runs on this computer and makes an adapter you can switch on in any chat; you can keep chatting meanwhile.")
	intro.Wrapping = fyne.TextWrapWord
	newRun := container.NewVBox(form, v.advanced, v.problem, v.estimate, container.NewHBox(layout.NewSpacer(), v.start))
	body := container.NewVBox(look.Heading("Teach"), intro, v.run.root,
		look.Section("New run", card(newRun)),
		look.Section("Your adapters", v.adapters.root),
		look.Section("Past runs", v.runs.root))
	v.run.parent = body
	v.scroll = look.PageScroll(container.NewPadded(body))
	v.root = v.scroll
	v.method.SetSelected(presetFor(d.Method).Label)
	e.teacher.Watch(func(u ui.TrainUpdate) { v.run.push(u) })
	v.run.onStarted = v.check
	v.run.onFinished = func() {
		v.adapters.reload()
		v.runs.reload()
		v.check()
	}
	return v
}

// reload refreshes everything the page shows from the services.
func (v *teachView) reload() {
	bases, err := v.env.teacher.Bases()
	var names []string
	v.baseIDs = map[string]string{}
	current := v.env.model.State().ID
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
	v.run.restore()
	v.check()
}

func (v *teachView) methodChanged() {
	m := v.selectedMethod()
	p := presetFor(m)
	v.methodHint.SetText(p.Hint)
	// A learning rate still at another method's default follows the method.
	lr := v.fields["lr"]
	for _, o := range methodPresets {
		if strings.TrimSpace(lr.Text) == fmt.Sprint(o.LR) && o.LR != p.LR {
			lr.SetText(fmt.Sprint(p.LR))
			break
		}
	}
	v.check()
}

func (v *teachView) selectedMethod() ui.TrainMethod {
	for _, p := range methodPresets {
		if p.Label == v.method.Selected {
			return p.Method
		}
	}
	return ui.MethodDPO
}

func (v *teachView) source() ui.TeachSource {
	return ui.TeachSource{Feedback: v.fromFeedback.Checked, Folder: v.folder}
}

func (v *teachView) chooseFolder() {
	dialog.ShowFolderOpen(func(u fyne.ListableURI, err error) {
		if err == nil && u != nil {
			v.setFolder(u.Path())
		}
	}, v.win)
}

// setFolder adds (or with "" removes) a dataset folder.
func (v *teachView) setFolder(path string) {
	v.folder = path
	v.folderLabel.SetText(path)
	if path == "" {
		v.clearFolder.Hide()
	} else {
		v.clearFolder.Show()
	}
	v.check()
}

func (v *teachView) fieldValues() planFields {
	f := func(k string) string { return v.fields[k].Text }
	return planFields{Name: f("name"), Steps: f("steps"), Rank: f("rank"), LR: f("lr"), Ratio: f("ratio"),
		ValShare: f("val"), Batch: f("batch"), MaxLen: f("maxlen"), Beta: f("beta"), Lambda: f("lambda")}
}

// check validates the form, then asks the teacher (off the UI goroutine)
// what the data gives and what the plan costs; the newest check wins.
func (v *teachView) check() {
	if v.start == nil {
		return // still building
	}
	gen := v.checking.Add(1)
	v.ready = false
	v.start.Disable()
	src, m := v.source(), v.selectedMethod()
	plan, perr := parsePlan(v.baseIDs[v.base.Selected], src, m, v.fieldValues())
	v.env.run(func() {
		var sum ui.DataSummary
		var serr error
		if src.Feedback || src.Folder != "" {
			sum, serr = v.env.teacher.Summarize(src, plan.ValShare)
		}
		var est ui.TrainEstimate
		var eerr error
		empty := nothingToLearn(sum, m, src)
		if perr == nil && serr == nil && empty == "" {
			est, eerr = v.env.teacher.Estimate(plan)
		}
		v.env.do(func() {
			if v.checking.Load() != gen {
				return
			}
			v.checked = gen
			v.summary = sum
			if f := v.fields["steps"]; f.Text == v.autoSteps && serr == nil && sum.Usable(m) > 0 {
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
				v.estimate.SetText(estimateLine(est))
				v.estimate.Show()
			default:
				v.showProblem("")
				v.estimate.SetText(estimateLine(est) + "\n" + est.Basis)
				v.estimate.Show()
				if v.run.active() {
					v.estimate.SetText(v.estimate.Text + "\nOne run at a time: start this one when the current run ends, or stop it.")
					return
				}
				v.plan, v.ready = plan, true
				v.start.Enable()
			}
		})
	})
}

func (v *teachView) showData(d ui.DataSummary, err error) {
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

func (v *teachView) showProblem(msg string) {
	if msg == "" {
		v.problem.Hide()
		return
	}
	v.problem.SetText(msg)
	v.problem.Show()
	v.estimate.Hide()
}

func (v *teachView) startRun() {
	if !v.ready {
		return
	}
	plan := v.plan
	v.start.Disable()
	v.env.run(func() {
		r, err := v.env.teacher.Start(plan)
		v.env.do(func() {
			if err != nil {
				v.showProblem(err.Error())
				v.start.Enable()
				return
			}
			v.run.follow(r)
			v.scroll.ScrollToTop() // the new run's card, at the top, is what happens next
			v.runs.reload()
			v.check()
		})
	})
}

// showPreview lists a few of the rows the feedback and folder give.
func (v *teachView) showPreview() {
	box := container.NewVBox()
	for _, p := range v.summary.Preview {
		box.Add(previewCard(p))
	}
	scroll := container.NewVScroll(box)
	scroll.SetMinSize(fyne.NewSize(620, 420))
	dialog.ShowCustom("What Perch will learn from", "Close", scroll, v.win)
}

func previewCard(p ui.DataPreview) fyne.CanvasObject {
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

// ShowTeach opens the Teach page.
func (mw *MainWindow) ShowTeach() {
	if mw.env.teacher == nil {
		return
	}
	if mw.teach == nil {
		mw.teach = newTeachView(mw.env, mw.Window)
		mw.teach.run.onTry = func(id string) {
			mw.ShowConversation("")
			mw.UseAdapter(id)
		}
	}
	mw.teach.reload()
	mw.teach.scroll.ScrollToTop() // the page opens at its top, with the run going on
	mw.showPage("teach", mw.teach.root)
}
