package dataset

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"path/filepath"
	"sort"

	"perch/app/history"
	"perch/engine/prompt"
	"perch/engine/trainset"
	"perch/ui"
)

// Data is what a source gives a method: rows from feedback and lines
// from a folder, each split into training and validation.
type Data struct {
	Rows             Rows
	Folder           *Folder
	Train, Valid     []Row
	RawTrain, RawVal [][]byte // a folder's lines as the user wrote them
	Notes            []string
}

// Gather reads src for method m (feedback from store, each prompt opened
// by system when set; a folder's lines) and splits it by share.
func Gather(store *history.Store, system string, src ui.TeachSource, m ui.TrainMethod, share float64) (*Data, error) {
	d := &Data{}
	if src.Feedback {
		rows, err := FromFeedback(store, system)
		if err != nil {
			return nil, err
		}
		d.Rows = rows
		use := rows.Examples
		switch m {
		case ui.MethodKTO:
			use = rows.Rated
		case ui.MethodSFT:
		default:
			use = rows.Pairs
		}
		d.Train, d.Valid = split(use, share)
	}
	if src.Folder != "" {
		fd, err := ReadFolder(src.Folder)
		if err != nil {
			return nil, err
		}
		d.Folder = fd
		pick := func(fs FolderSplit) ([][]byte, int) {
			if m == ui.MethodKTO { // a folder's rows are examples or pairs, not rated answers
				return nil, len(fs.Examples) + len(fs.Pairs)
			}
			if m == ui.MethodSFT {
				return fs.Examples, len(fs.Pairs)
			}
			return fs.Pairs, len(fs.Examples)
		}
		tr, skipped := pick(fd.Train)
		if skipped > 0 {
			d.Notes = append(d.Notes, fmt.Sprintf("%s: %d rows of the other kind are left out (%s learns from %s)",
				filepath.Base(fd.Dir), skipped, m, map[bool]string{true: "examples", false: "pairs"}[m == ui.MethodSFT]))
		}
		if fd.HasValid {
			d.RawTrain = tr
			d.RawVal, _ = pick(fd.Valid)
		} else {
			d.RawTrain, d.RawVal = splitLines(tr, share)
			if len(d.RawVal) > 0 {
				d.Notes = append(d.Notes, fmt.Sprintf("%s has no valid.jsonl: %d of its rows are held out for validation",
					filepath.Base(fd.Dir), len(d.RawVal)))
			}
		}
	}
	return d, nil
}

// splitLines holds out a share of a folder's lines (every k-th).
func splitLines(lines [][]byte, share float64) (train, valid [][]byte) {
	n := int(float64(len(lines))*share + 0.5)
	if share <= 0 || len(lines) < 3 || n == 0 {
		return lines, nil
	}
	every := max(len(lines)/n, 2)
	for i, l := range lines {
		if i%every == every-1 && len(valid) < n {
			valid = append(valid, l)
		} else {
			train = append(train, l)
		}
	}
	return train, valid
}

// Summarize counts what src gives each method, with notes and a preview,
// for the Teach page.
func Summarize(store *history.Store, system string, src ui.TeachSource, share float64) (ui.DataSummary, error) {
	var sum ui.DataSummary
	for _, m := range []ui.TrainMethod{ui.MethodSFT, ui.MethodDPO} {
		d, err := Gather(store, system, src, m, share)
		if err != nil {
			return sum, err
		}
		n := len(d.Train) + len(d.Valid) + len(d.RawTrain) + len(d.RawVal)
		if m == ui.MethodSFT {
			sum.Examples = n
			continue
		}
		sum.Pairs, sum.Unpaired, sum.Rated = n, d.Rows.Unpaired, len(d.Rows.Rated)
		for _, r := range d.Rows.Examples { // one per taught answer
			if r.Media() > 0 {
				sum.Media++
			}
		}
		if fd := d.Folder; fd != nil {
			sum.Media += fd.Train.Media + fd.Valid.Media
			if !fd.HasValid && share > 0 {
				sum.Notes = append(sum.Notes, fmt.Sprintf("%s has no valid.jsonl: %.0f%% of its rows are held out for validation",
					filepath.Base(fd.Dir), share*100))
			}
		}
		sum.Preview = previews(d)
	}
	return sum, nil
}

func previews(d *Data) []ui.DataPreview {
	var out []ui.DataPreview
	add := func(r Row) {
		if len(out) >= 8 {
			return
		}
		prompt := ""
		if n := len(r.Prompt); n > 0 {
			prompt = r.Prompt[n-1].Text
		}
		out = append(out, ui.DataPreview{Prompt: prompt, Chosen: r.Chosen, Rejected: r.Rejected, Media: r.Media(), Origin: r.Origin})
	}
	for _, r := range d.Rows.Pairs {
		add(r)
	}
	for _, r := range d.Rows.Examples {
		add(r)
	}
	if d.Folder != nil {
		for _, r := range d.Folder.Train.Preview {
			add(r)
		}
	}
	return out
}

// split divides rows into training and validation: a share of them,
// chosen by a hash of each row's key so the split stays the same as
// feedback grows. With three rows or more and share > 0, at least one is
// held out; at least one always trains.
func split(rows []Row, share float64) (train, valid []Row) {
	if share <= 0 || len(rows) < 3 {
		return rows, nil
	}
	n := int(float64(len(rows))*share + 0.5)
	n = min(max(n, 1), len(rows)-1)
	type ranked struct {
		h uint64
		i int
	}
	rk := make([]ranked, len(rows))
	for i, r := range rows {
		sum := sha256.Sum256([]byte(r.Key))
		rk[i] = ranked{binary.BigEndian.Uint64(sum[:8]), i}
	}
	sort.Slice(rk, func(a, b int) bool { return rk[a].h < rk[b].h })
	held := map[int]bool{}
	for _, r := range rk[:n] {
		held[r.i] = true
	}
	for i, r := range rows {
		if held[i] {
			valid = append(valid, r)
		} else {
			train = append(train, r)
		}
	}
	return train, valid
}

// Examples is d as the engine's trainer takes it: the rows, then the
// folder's lines, of each split (attachments named by hash: the trainer
// reads their bytes through its ReadMedia).
func (d *Data) Examples() (training, validation []trainset.Example) {
	return examples(d.Train, d.RawTrain, "training"), examples(d.Valid, d.RawVal, "validation")
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
