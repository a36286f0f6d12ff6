package window

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/widget"
)

// The chat header's model button: it names the model and the
// conversation's adapter ("Gemma-4 E2B + my-style") and opens a menu that
// switches the adapter for this conversation.

// refreshAdapter shows the open conversation's adapter in the model button.
func (mw *MainWindow) refreshAdapter() {
	if mw.env.Feedback == nil {
		return
	}
	_, name := mw.env.Feedback.Adapter(mw.chat.ConvID)
	mw.pill.adapter = name
	mw.pill.set(mw.pill.state)
}

// adapterMenuItems are the adapters made for the current model, the one
// in use checked, then the ways to the Models and Teach pages.
func (mw *MainWindow) adapterMenuItems() []*fyne.MenuItem {
	e := mw.env
	s := e.Model.State()
	cur, _ := e.Feedback.Adapter(mw.chat.ConvID)
	pick := func(id string) func() { return func() { mw.UseAdapter(id) } }
	base := fyne.NewMenuItem(s.Name+" (no adapter)", pick(""))
	base.Checked = cur == ""
	items := []*fyne.MenuItem{base}
	if e.Adapters != nil {
		list, err := e.Adapters.Adapters()
		if err != nil {
			mw.chat.Comp.ShowNotice("Could not list adapters: " + err.Error())
		}
		for _, a := range list {
			if a.Base != s.ID {
				continue // made for another model
			}
			it := fyne.NewMenuItem(s.Name+" + "+a.Name, pick(a.ID))
			it.Checked = a.ID == cur
			items = append(items, it)
		}
	}
	items = append(items, fyne.NewMenuItemSeparator(), fyne.NewMenuItem("Models…", mw.ShowModels))
	if e.Teacher != nil {
		items = append(items, fyne.NewMenuItem("Teach…", mw.ShowTeach))
	}
	return items
}

func (mw *MainWindow) showModelMenu() {
	if mw.env.Model.State().ID == "" {
		mw.ShowModels()
		return
	}
	c := mw.Window.Canvas()
	btn := mw.pill.btn
	pos := fyne.CurrentApp().Driver().AbsolutePositionForObject(btn).AddXY(0, btn.Size().Height)
	widget.ShowPopUpMenuAtPosition(fyne.NewMenu("", mw.adapterMenuItems()...), c, pos)
}

// UseAdapter switches the open conversation (or, for a new chat, the next
// one) to adapter id ("" for the base model).
func (mw *MainWindow) UseAdapter(id string) {
	if err := mw.env.Feedback.SetAdapter(mw.chat.ConvID, id); err != nil {
		mw.chat.Comp.ShowNotice("Could not switch the adapter: " + err.Error())
		return
	}
	mw.refreshAdapter()
}

// AdapterLabel is what the model button says (for scripted runs and tests).
func (mw *MainWindow) AdapterLabel() string { return mw.pill.btn.Text }
