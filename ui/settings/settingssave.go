package settings

import (
	"reflect"
	"time"

	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/widget"
)

// Settings are saved as they are changed, as macOS's own settings are: a
// choice at once, typing after a short pause (so a port typed digit by
// digit is not applied four times), and whatever is pending when the page
// is left. Nothing is left to lose by going back to the chat; a value that
// cannot be saved is said under the form and, when the page is left, in a
// dialog.

// saveAfterTyping is the pause in typing after which a field is saved.
const saveAfterTyping = 700 * time.Millisecond

// watchChanges saves the form when any of its fields changes.
func (v *View) watchChanges() {
	for _, e := range []*widget.Entry{v.system, v.Port, v.toolRounds, v.hotkey, v.modelsDir,
		v.Gen.Temp, v.Gen.topP, v.Gen.topK, v.Gen.MaxTokens, v.Gen.frames} {
		e.OnChanged = func(string) { v.typed() }
	}
	for _, s := range []*widget.Select{v.Model, v.longChats, v.Gen.budget, v.Gen.fps} {
		s.OnChanged = func(string) { v.flush() }
	}
	for _, c := range []*widget.Check{v.Thinking, v.login, v.api} {
		c.OnChanged = func(bool) { v.flush() }
	}
}

// typed saves the form once typing pauses.
func (v *View) typed() {
	if v.loading {
		return
	}
	v.typing++
	gen := v.typing
	time.AfterFunc(saveAfterTyping, func() {
		v.env.Do(func() {
			if v.typing == gen {
				v.flush()
			}
		})
	})
}

// flush saves the form if it differs from what is saved; it reports
// whether the saved settings now match the form.
func (v *View) flush() bool {
	if v.loading {
		return true
	}
	v.typing++ // a pending save has nothing left to do
	s, err := v.read()
	if err == nil && reflect.DeepEqual(s, v.loaded) {
		return true
	}
	return v.save()
}

// Leave saves what is pending as the page closes, and says so when a
// value could not be saved.
func (v *View) Leave() {
	if v.flush() {
		return
	}
	dialog.ShowInformation("Some settings were not saved", v.Status.Text, v.win)
}
