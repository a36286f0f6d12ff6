package settings

import (
	"fmt"
	"strconv"
	"strings"

	"fyne.io/fyne/v2/widget"

	"perch/ui"
	"perch/ui/look"
)

// modelSettings are the settings a model has its own defaults for. Each
// left empty (or on "Model default") sends nothing, and the entry shows the
// model's value as its placeholder.
type modelSettings struct {
	Temp, topP, topK, MaxTokens, frames *widget.Entry
	budget, fps                         *widget.Select
	budgets                             []int
}

const modelDefault = "Model default"

func newModelSettings(budgets []int) *modelSettings {
	m := &modelSettings{budgets: budgets}
	m.Temp, m.topP, m.topK = look.FieldEntry(), look.FieldEntry(), look.FieldEntry()
	m.MaxTokens, m.frames = look.FieldEntry(), look.FieldEntry()
	m.budget = widget.NewSelect(nil, nil)
	m.fps = widget.NewSelect(nil, nil)
	m.showDefaults(nil)
	return m
}

// showDefaults writes the model's values into placeholders and the
// "Model default" choices (d nil: not known until a model is chosen).
func (m *modelSettings) showDefaults(d *ui.ModelDefaults) {
	say := func(f string, v ...any) string {
		if d == nil {
			return modelDefault
		}
		return modelDefault + " · " + fmt.Sprintf(f, v...)
	}
	var temp, topP, topK, maxTok, frames, budget, fps string
	if d != nil && d.Greedy {
		temp, topP, topK = say("0 (greedy)"), say("off"), say("off")
	} else if d != nil {
		temp, topP, topK = say("%.3g", d.Sampling.Temperature), say("%.3g", d.Sampling.TopP), say("%d", d.Sampling.TopK)
	} else {
		temp, topP, topK = say(""), say(""), say("")
	}
	if d != nil {
		maxTok, frames, fps = say("%d", d.MaxTokens), say("%d", d.MaxFrames), say("%g", d.VideoFPS)
		budget = say("%d tokens", d.ImageTokens)
		if d.ImageTokens == 0 {
			budget = say("no vision")
		}
	} else {
		maxTok, frames, budget, fps = say(""), say(""), say(""), say("")
	}
	m.Temp.SetPlaceHolder(temp)
	m.topP.SetPlaceHolder(topP)
	m.topK.SetPlaceHolder(topK)
	m.MaxTokens.SetPlaceHolder(maxTok)
	m.frames.SetPlaceHolder(frames)
	keep := func(s *widget.Select, opts []string) {
		wasDefault := s.SelectedIndex() <= 0
		sel := s.Selected
		s.Options = opts
		if wasDefault {
			s.SetSelectedIndex(0)
		} else {
			s.SetSelected(sel)
		}
	}
	opts := []string{budget}
	for _, b := range m.budgets {
		opts = append(opts, fmt.Sprintf("%d tokens", b))
	}
	keep(m.budget, opts)
	keep(m.fps, []string{fps, "0.5", "1", "2", "4"})
}

// set shows s's values; unset ones stay empty.
func (m *modelSettings) set(s ui.Settings) {
	float := func(e *widget.Entry, v *float32) {
		e.SetText("")
		if v != nil {
			e.SetText(strconv.FormatFloat(float64(*v), 'f', -1, 32))
		}
	}
	integer := func(e *widget.Entry, v *int) {
		e.SetText("")
		if v != nil {
			e.SetText(strconv.Itoa(*v))
		}
	}
	float(m.Temp, s.Sampling.Temperature)
	float(m.topP, s.Sampling.TopP)
	integer(m.topK, s.Sampling.TopK)
	integer(m.MaxTokens, s.MaxTokens)
	integer(m.frames, s.MaxFrames)
	m.budget.SetSelectedIndex(0)
	if s.ImageTokens != nil {
		m.budget.SetSelected(fmt.Sprintf("%d tokens", *s.ImageTokens))
	}
	m.fps.SetSelectedIndex(0)
	if s.VideoFPS != nil {
		m.fps.SetSelected(strconv.FormatFloat(*s.VideoFPS, 'f', -1, 64))
	}
}

// read fills s from the fields; bad names what is not a number.
func (m *modelSettings) read(s *ui.Settings) (bad []string) {
	float := func(name string, e *widget.Entry) *float32 {
		t := strings.TrimSpace(e.Text)
		if t == "" {
			return nil
		}
		f, err := strconv.ParseFloat(t, 32)
		if err != nil {
			bad = append(bad, name+" must be a number (or empty for the model's)")
			return nil
		}
		f32 := float32(f)
		return &f32
	}
	integer := func(name string, e *widget.Entry) *int {
		t := strings.TrimSpace(e.Text)
		if t == "" {
			return nil
		}
		n, err := strconv.Atoi(t)
		if err != nil {
			bad = append(bad, name+" must be a whole number (or empty for the model's)")
			return nil
		}
		return &n
	}
	s.Sampling.Temperature, s.Sampling.TopP = float("temperature", m.Temp), float("top-p", m.topP)
	s.Sampling.TopK, s.MaxTokens, s.MaxFrames = integer("top-k", m.topK), integer("max tokens", m.MaxTokens), integer("max video frames", m.frames)
	s.ImageTokens, s.VideoFPS = nil, nil
	if m.budget.SelectedIndex() > 0 {
		var n int
		fmt.Sscanf(m.budget.Selected, "%d", &n)
		s.ImageTokens = &n
	}
	if m.fps.SelectedIndex() > 0 {
		if f, err := strconv.ParseFloat(m.fps.Selected, 64); err == nil {
			s.VideoFPS = &f
		}
	}
	return bad
}

// reset empties every field: the model's defaults apply.
func (m *modelSettings) reset() { m.set(ui.Settings{}) }
