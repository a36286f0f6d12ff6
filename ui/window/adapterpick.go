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
	if mw.env.feedback == nil {
		return
	}
	_, name := mw.env.feedback.Adapter(mw.chat.convID)
	mw.pill.adapter = name
	mw.pill.set(mw.pill.state)
}

// adapterMenuItems are the adapters made for the current model, the one
// in use checked, then the ways to the Models and Teach pages.
func (mw *MainWindow) adapterMenuItems() []*fyne.MenuItem {
	e := mw.env
	s := e.model.State()
	cur, _ := e.feedback.Adapter(mw.chat.convID)
	pick := func(id string) func() { return func() { mw.UseAdapter(id) } }
	base := fyne.NewMenuItem(s.Name+" (no adapter)", pick(""))
	base.Checked = cur == ""
	items := []*fyne.MenuItem{base}
	if e.adapters != nil {
		list, err := e.adapters.Adapters()
		if err != nil {
			mw.chat.comp.showNotice("Could not list adapters: " + err.Error())
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
	if e.teacher != nil {
		items = append(items, fyne.NewMenuItem("Teach…", mw.ShowTeach))
	}
	return items
}

func (mw *MainWindow) showModelMenu() {
	if mw.env.model.State().ID == "" {
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
	if err := mw.env.feedback.SetAdapter(mw.chat.convID, id); err != nil {
		mw.chat.comp.showNotice("Could not switch the adapter: " + err.Error())
		return
	}
	mw.refreshAdapter()
}

// AdapterLabel is what the model button says (for scripted runs and tests).
func (mw *MainWindow) AdapterLabel() string { return mw.pill.btn.Text }

// adapterSuffix is " + my-style" for the adapter new conversations and
// quick-ask answer with ("" for none).
func adapterSuffix(e *env) string {
	if e.feedback == nil {
		return ""
	}
	if _, name := e.feedback.Adapter(""); name != "" {
		return " + " + name
	}
	return ""
}
