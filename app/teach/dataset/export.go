package dataset

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
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

// Export writes d as an mlx-lm dataset folder in dir (train.jsonl,
// valid.jsonl, the attachments under media/, read from store) for the
// user to keep or to train elsewhere: preference pairs, or examples for
// SFT. Perch's own runs never read it: their rows go to the engine as
// they are (Examples).
func (d *Data) Export(store *history.Store, dir string, m ui.TrainMethod) error {
	if len(d.Train)+len(d.RawTrain) == 0 {
		return errors.New("nothing to export: the data has no rows for this method")
	}
	w, err := newDatasetWriter(dir, store)
	if err != nil {
		return err
	}
	pairs := m != ui.MethodSFT
	if err := w.file("train.jsonl", d.Train, pairs, d.RawTrain); err != nil {
		return err
	}
	return w.file("valid.jsonl", d.Valid, pairs, d.RawVal)
}
