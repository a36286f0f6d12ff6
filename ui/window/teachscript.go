package window

import (
	"fmt"

	"perch/ui"
	"perch/ui/chat"
)

// Hooks for scripted runs of the real app (make screenshot): each does
// what the matching button does.

// lastAnswer is the newest answer's view in the chat.
func (mw *MainWindow) lastAnswer() (*chat.MessageView, error) {
	vs := mw.chat.Views
	for i := len(vs) - 1; i >= 0; i-- {
		if vs[i].Msg.Role == ui.Assistant {
			return vs[i], nil
		}
	}
	return nil, fmt.Errorf("no answer in the chat")
}

// RateLast taps the newest answer's thumbs up or down.
func (mw *MainWindow) RateLast(r ui.Rating) error {
	v, err := mw.lastAnswer()
	if err != nil || v.Acts.Rate == nil {
		return fmt.Errorf("the answer takes no rating (%v)", err)
	}
	v.Acts.Rate(v.Msg, r)
	return nil
}

// CorrectLast saves text as the newest answer's correction.
func (mw *MainWindow) CorrectLast(text string) error {
	v, err := mw.lastAnswer()
	if err != nil || v.Acts.Correct == nil {
		return fmt.Errorf("the answer takes no correction (%v)", err)
	}
	v.Acts.Correct(v.Msg, text)
	return nil
}

// RegenerateLast taps the newest answer's regenerate.
func (mw *MainWindow) RegenerateLast() error {
	v, err := mw.lastAnswer()
	if err != nil {
		return err
	}
	mw.chat.Regenerate(v.Msg)
	return nil
}

// LastAnswer is the newest answer as shown (its rating, whether corrected).
func (mw *MainWindow) LastAnswer() (ui.Message, error) {
	v, err := mw.lastAnswer()
	if err != nil {
		return ui.Message{}, err
	}
	return v.Msg, nil
}

// TeachCheck says whether the Teach page can start, or why not, once its
// latest check is back.
func (mw *MainWindow) TeachCheck() (settled, ready bool, problem string) {
	v := mw.teach
	if v == nil {
		return false, false, "the Teach page is not open"
	}
	return v.Checked == v.Checking.Load(), v.Ready, v.Problem.Text
}

// SetTeachSteps types n into the Steps field.
func (mw *MainWindow) SetTeachSteps(n int) { mw.teach.Fields["steps"].SetText(fmt.Sprint(n)) }

// TeachRun is the run the Teach page shows and the points on its chart.
func (mw *MainWindow) TeachRun() (ui.TrainRun, int) {
	if mw.teach == nil || !mw.teach.Run.Shown {
		return ui.TrainRun{}, 0
	}
	return mw.teach.Run.Run, mw.teach.Run.Loss.Len(0)
}

// ScrollTeachTo scrolls the Teach page to its top or its adapters.
func (mw *MainWindow) ScrollTeachTo(adapters bool) {
	v := mw.teach
	if v == nil {
		return
	}
	if s, ok := v.Root.(interface{ ScrollToTop() }); ok && !adapters {
		s.ScrollToTop()
		return
	}
	if s, ok := v.Root.(interface{ ScrollToBottom() }); ok {
		s.ScrollToBottom()
	}
}

// OpenModelMenu opens the chat header's model menu.
func (mw *MainWindow) OpenModelMenu() { mw.showModelMenu() }

// CloseOverlays closes menus and dialogs.
func (mw *MainWindow) CloseOverlays() {
	o := mw.Window.Canvas().Overlays()
	for o.Top() != nil {
		o.Remove(o.Top())
	}
}

// ScrollChatToBottom shows the newest messages.
func (mw *MainWindow) ScrollChatToBottom() { mw.chat.Scroll.ScrollToBottom() }
