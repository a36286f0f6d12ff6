package teach

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"perch/app/history"
	"perch/ui"
)

// A dataset folder in mlx-lm's formats, as the engine's trainer reads
// it: train.jsonl and valid.jsonl, media files under media/ referred to
// by paths relative to the JSONL files.
//   SFT:      {"messages": [..., {"role": "assistant", "content": "…"}]}
//   DPO/ORPO: {"prompt": [...], "chosen": "…", "rejected": "…"}

type jsonPart struct {
	Type  string `json:"type"`
	Text  string `json:"text,omitempty"`
	Image string `json:"image,omitempty"`
	Audio string `json:"audio,omitempty"`
	Video string `json:"video,omitempty"`
}

type jsonMessage struct {
	Role    string `json:"role"`
	Content any    `json:"content"` // a string, or parts when media come along
	// An assistant turn's tool calls, and the call a "tool" turn answers
	// (OpenAI's keys; the chat template renders them).
	ToolCalls  []jsonToolCall `json:"tool_calls,omitempty"`
	ToolCallID string         `json:"tool_call_id,omitempty"`
	Name       string         `json:"name,omitempty"`
}

type jsonToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function jsonFunction `json:"function"`
}

type jsonFunction struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

type exampleLine struct {
	Messages []jsonMessage `json:"messages"`
}

type pairLine struct {
	Prompt   []jsonMessage `json:"prompt"`
	Chosen   string        `json:"chosen"`
	Rejected string        `json:"rejected"`
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

// datasetWriter writes one dataset folder, copying each attachment once.
type datasetWriter struct {
	dir    string
	store  *history.Store
	copied map[string]string // sha256 → path relative to dir
}

func newDatasetWriter(dir string, store *history.Store) (*datasetWriter, error) {
	if err := os.MkdirAll(filepath.Join(dir, "media"), 0o700); err != nil {
		return nil, fmt.Errorf("teach: make the dataset folder: %w", err)
	}
	return &datasetWriter{dir: dir, store: store, copied: map[string]string{}}, nil
}

// media copies an attachment into media/ and returns its relative path.
func (w *datasetWriter) media(a history.Attachment) (string, error) {
	if p, ok := w.copied[a.SHA256]; ok {
		return p, nil
	}
	data, err := w.store.ReadBlob(a.SHA256)
	if err != nil {
		return "", fmt.Errorf("%s: %w", a.Name, err)
	}
	rel := filepath.ToSlash(filepath.Join("media", a.SHA256+extFor(a)))
	if err := os.WriteFile(filepath.Join(w.dir, rel), data, 0o600); err != nil {
		return "", fmt.Errorf("teach: copy %s into the dataset: %w", a.Name, err)
	}
	w.copied[a.SHA256] = rel
	return rel, nil
}

func extFor(a history.Attachment) string {
	if e := strings.ToLower(filepath.Ext(a.Name)); len(e) > 1 && len(e) <= 5 {
		return e
	}
	return map[string]string{"image": ".img", "audio": ".snd", "video": ".vid"}[a.Kind]
}

func (w *datasetWriter) messages(turns []Turn) ([]jsonMessage, error) {
	var out []jsonMessage
	for _, t := range turns {
		if len(t.Media) == 0 {
			m := jsonMessage{Role: t.Role, Content: t.Text}
			for _, c := range t.Calls {
				m.ToolCalls = append(m.ToolCalls, jsonToolCall{ID: c.ID, Type: "function", Function: jsonFunction{Name: c.Name, Arguments: c.Arguments}})
			}
			if t.Result != nil {
				m.ToolCallID, m.Name = t.Result.ID, t.Result.Name
			}
			out = append(out, m)
			continue
		}
		var parts []jsonPart
		for _, a := range t.Media {
			p, err := w.media(a)
			if err != nil {
				return nil, err
			}
			part := jsonPart{Type: a.Kind}
			switch a.Kind {
			case "image":
				part.Image = p
			case "audio":
				part.Audio = p
			case "video":
				part.Video = p
			default:
				return nil, fmt.Errorf("%s: a %q attachment cannot be trained on", a.Name, a.Kind)
			}
			parts = append(parts, part)
		}
		if t.Text != "" {
			parts = append(parts, jsonPart{Type: "text", Text: t.Text})
		}
		out = append(out, jsonMessage{Role: t.Role, Content: parts})
	}
	return out, nil
}

// ratedLine is a KTO row: {"prompt", "completion", "label"}.
type ratedLine struct {
	Prompt     []jsonMessage `json:"prompt"`
	Completion string        `json:"completion"`
	Label      bool          `json:"label"`
}

// line is one row as JSON for method m.
func (w *datasetWriter) line(r Row, pairs bool) ([]byte, error) {
	msgs, err := w.messages(r.Prompt)
	if err != nil {
		return nil, err
	}
	if pairs && r.Rejected == "" { // a rated row (KTO): TRL's unpaired line
		return json.Marshal(ratedLine{Prompt: msgs, Completion: r.Chosen, Label: !r.Disliked})
	}
	if pairs {
		return json.Marshal(pairLine{Prompt: msgs, Chosen: r.Chosen, Rejected: r.Rejected})
	}
	return json.Marshal(exampleLine{Messages: append(msgs, jsonMessage{Role: "assistant", Content: r.Chosen})})
}

// file writes rows, then the raw lines (from a user's folder), to name;
// it writes nothing when there is nothing to write.
func (w *datasetWriter) file(name string, rows []Row, pairs bool, raw [][]byte) error {
	if len(rows)+len(raw) == 0 {
		return nil
	}
	f, err := os.Create(filepath.Join(w.dir, name))
	if err != nil {
		return fmt.Errorf("teach: write %s: %w", name, err)
	}
	bw := bufio.NewWriter(f)
	for _, r := range rows {
		b, err := w.line(r, pairs)
		if err != nil {
			f.Close()
			return err
		}
		bw.Write(b)
		bw.WriteByte('\n')
	}
	for _, b := range raw {
		bw.Write(b)
		bw.WriteByte('\n')
	}
	if err := bw.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("teach: write %s: %w", name, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// ExportDataset writes the plan's rows as an mlx-lm dataset folder in dir
// (train.jsonl, valid.jsonl, the attachments under media/) for the user
// to keep or to train elsewhere. Perch's own runs never read it: their
// rows go to the engine as they are.
func (s *Service) ExportDataset(plan ui.TrainPlan, dir string) error {
	d, err := s.gather(plan.Source, plan.Method, plan.ValShare)
	if err != nil {
		return err
	}
	if len(d.train)+len(d.rawTrain) == 0 {
		return errors.New("nothing to export: the data has no rows for this method")
	}
	w, err := newDatasetWriter(dir, s.o.Store)
	if err != nil {
		return err
	}
	pairs := plan.Method != ui.MethodSFT
	if err := w.file("train.jsonl", d.train, pairs, d.rawTrain); err != nil {
		return err
	}
	return w.file("valid.jsonl", d.valid, pairs, d.rawVal)
}
