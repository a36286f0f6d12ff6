package teach

import (
	"errors"
	"fmt"

	"perch/engine/prompt"
	"perch/engine/trainset"
	"perch/ui"
)

// trainData is what one run trains on: rows as the engine takes them, or
// (a run started before rows went straight through) its dataset folder.
type trainData struct {
	folder       string
	train, valid []trainset.Example
}

// rowsFor gathers the plan's rows from its sources as the engine takes
// them: feedback rows with their attachments named by hash, a folder's
// lines as the user wrote them.
func (s *Service) rowsFor(plan ui.TrainPlan) (trainData, error) {
	d, err := s.gather(plan.Source, plan.Method, plan.ValShare)
	if err != nil {
		return trainData{}, err
	}
	if len(d.train)+len(d.rawTrain) == 0 {
		return trainData{}, errors.New("nothing to train on: the data has no rows for this method")
	}
	return trainData{train: examples(d.train, d.rawTrain, "training"), valid: examples(d.valid, d.rawVal, "validation")}, nil
}

// examples is rows, then a folder's lines, as training examples.
func examples(rows []Row, lines [][]byte, what string) []trainset.Example {
	var out []trainset.Example
	for i, r := range rows {
		ex := trainset.Example{Source: fmt.Sprintf("%s row %d (%s)", what, i+1, r.Origin), Chosen: r.Chosen, Rejected: r.Rejected, Desirable: !r.Disliked}
		for _, t := range r.Prompt {
			m := prompt.Message{Role: prompt.Role(t.Role)}
			for _, c := range t.Calls { // as the exported file's tool_calls
				m.ToolCalls = append(m.ToolCalls, prompt.ToolCall{ID: c.ID, Name: c.Name, Arguments: c.Arguments})
			}
			if t.Result != nil {
				m.ToolCallID, m.ToolName = t.Result.ID, t.Result.Name
			}
			for _, a := range t.Media { // attachments first, then the text, as the chat sends them
				m.Content = append(m.Content, prompt.Part{Type: prompt.PartType(a.Kind), Name: a.SHA256, Hash: a.SHA256})
			}
			if t.Text != "" || len(t.Media) == 0 {
				m.Content = append(m.Content, prompt.Part{Type: prompt.Text, Text: t.Text})
			}
			ex.Prompt = append(ex.Prompt, m)
		}
		out = append(out, ex)
	}
	for i, l := range lines {
		out = append(out, trainset.Example{Source: fmt.Sprintf("%s line %d of your folder", what, i+1), Line: l})
	}
	return out
}

// readMedia gives an attachment's bytes by its hash (the name its parts
// carry).
func (s *Service) readMedia(kind, name string) ([]byte, error) {
	switch kind {
	case "image", "audio", "video":
	default:
		return nil, fmt.Errorf("a %q attachment cannot be trained on", kind)
	}
	return s.o.Store.ReadBlob(name)
}
