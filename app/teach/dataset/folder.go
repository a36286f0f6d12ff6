package dataset

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"perch/engine/regfile"
)

// A folder of JSONL files the user already has (mlx-lm's layout:
// train.jsonl, optional valid.jsonl). Perch reads it line by line to count
// and preview what it holds; the engine checks each row fully when the run
// starts (with the model's template and tokenizer).

// Limits on a user's folder, applied while reading.
const (
	maxFolderFile = 1 << 30 // bytes per JSONL file
	maxLine       = 16 << 20
	maxRows       = 1 << 20
)

// FolderSplit is one file's lines by kind.
type FolderSplit struct {
	Examples, Pairs [][]byte // lines, media paths made absolute
	Media           int      // lines with a media part
	Preview         []Row
}

// Folder is a user's dataset folder.
type Folder struct {
	Dir          string
	Train, Valid FolderSplit
	HasValid     bool
}

// ReadFolder reads dir/train.jsonl (required) and dir/valid.jsonl.
func ReadFolder(dir string) (*Folder, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("the folder %s: %w", dir, err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("%s is a file: choose the folder that holds train.jsonl", dir)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	fd := &Folder{Dir: abs}
	if err := readSplit(filepath.Join(abs, "train.jsonl"), &fd.Train); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%s has no train.jsonl (mlx-lm's layout: train.jsonl, and valid.jsonl for validation)", dir)
		}
		return nil, err
	}
	err = readSplit(filepath.Join(abs, "valid.jsonl"), &fd.Valid)
	switch {
	case err == nil:
		fd.HasValid = true
	case !errors.Is(err, os.ErrNotExist):
		return nil, err
	}
	return fd, nil
}

func readSplit(path string, s *FolderSplit) error {
	f, err := regfile.Open(path) // a FIFO or device is refused before any read
	if err != nil {
		return err
	}
	defer f.Close()
	name := filepath.Base(path)
	r := bufio.NewReaderSize(regfile.Capped(f, maxFolderFile, path+" (split it)"), 1<<16)
	for n := 1; ; n++ {
		line, err := readLine(r)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s:%d: %v", name, n, err)
		}
		if n == 1 {
			line = bytes.TrimPrefix(line, []byte("\xef\xbb\xbf")) // a UTF-8 byte order mark
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		if len(s.Examples)+len(s.Pairs) >= maxRows {
			return fmt.Errorf("%s has more than %d rows: split it", name, maxRows)
		}
		if err := s.add(line, filepath.Dir(path), fmt.Sprintf("%s:%d", name, n)); err != nil {
			return fmt.Errorf("%s:%d: %v", name, n, err)
		}
	}
}

// readLine reads one line of at most maxLine bytes.
func readLine(r *bufio.Reader) ([]byte, error) {
	var out []byte
	for {
		chunk, err := r.ReadSlice('\n')
		out = append(out, chunk...)
		if len(out) > maxLine {
			return nil, fmt.Errorf("a line longer than %d bytes", maxLine)
		}
		switch {
		case err == bufio.ErrBufferFull:
			continue
		case err == io.EOF && len(out) > 0:
			return out, nil
		}
		return out, err
	}
}

// add classifies one line and keeps it with its media paths made absolute.
func (s *FolderSplit) add(line []byte, dir, src string) error {
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	var rec map[string]any
	if err := dec.Decode(&rec); err != nil {
		return fmt.Errorf("not a JSON object: %v", err)
	}
	has := func(k string) bool { v, ok := rec[k]; return ok && v != nil }
	pair := has("chosen") || has("rejected") || has("chosen_ids")
	switch {
	case pair && !(has("prompt") || has("prompt_ids")):
		return errors.New("a preference row needs \"prompt\", \"chosen\" and \"rejected\"")
	case !pair && !has("messages") && !has("prompt") && !has("text") && !has("input_ids"):
		return errors.New("no known format: want {\"messages\"}, {\"prompt\", \"completion\"}, {\"text\"} or {\"prompt\", \"chosen\", \"rejected\"}")
	}
	media := absMedia(rec, dir)
	out, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	if media > 0 {
		s.Media++
	}
	if pair {
		s.Pairs = append(s.Pairs, out)
	} else {
		s.Examples = append(s.Examples, out)
	}
	if len(s.Preview) < 3 {
		s.Preview = append(s.Preview, previewOf(rec, src, media))
	}
	return nil
}

var mediaKeys = map[string][]string{"image": {"image", "path"}, "audio": {"audio", "path"}, "video": {"video", "path"}}

// absMedia makes the relative file paths of media parts under v absolute
// (they are relative to the JSONL file, and the merged dataset lives
// elsewhere) and counts the parts.
func absMedia(v any, dir string) int {
	n := 0
	switch x := v.(type) {
	case map[string]any:
		t, _ := x["type"].(string)
		if keys, ok := mediaKeys[t]; ok {
			n++
			for _, k := range keys {
				if p, ok := x[k].(string); ok && p != "" && !filepath.IsAbs(p) && !strings.Contains(p, "://") {
					x[k] = filepath.Join(dir, p)
				}
			}
		}
		if t == "image_url" {
			n++
			if u, ok := x["image_url"].(map[string]any); ok {
				if p, ok := u["url"].(string); ok && !strings.Contains(p, "://") && !filepath.IsAbs(p) && !strings.HasPrefix(p, "data:") {
					u["url"] = filepath.Join(dir, p)
				}
			}
		}
		for _, c := range x {
			n += absMedia(c, dir)
		}
	case []any:
		for _, c := range x {
			n += absMedia(c, dir)
		}
	}
	return n
}

// previewOf is a row of a folder as the Teach page previews it.
func previewOf(rec map[string]any, src string, media int) Row {
	r := Row{Origin: src, Prompt: []Turn{{Role: "user", Text: textOf(rec["prompt"])}}, files: media}
	switch {
	case rec["chosen"] != nil:
		r.Chosen, r.Rejected = textOf(rec["chosen"]), textOf(rec["rejected"])
	case rec["messages"] != nil:
		msgs, _ := rec["messages"].([]any)
		if len(msgs) > 0 {
			r.Prompt[0].Text = textOf(msgs[:len(msgs)-1])
			r.Chosen = textOf(msgs[len(msgs)-1])
		}
	case rec["completion"] != nil:
		r.Chosen = textOf(rec["completion"])
	default:
		r.Chosen = textOf(rec["text"])
	}
	return r
}

// textOf flattens a string, a message, a part list or a message list to
// its last text.
func textOf(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case map[string]any:
		if c, ok := x["content"]; ok {
			return textOf(c)
		}
		if t, ok := x["text"].(string); ok {
			return t
		}
	case []any:
		var parts []string
		for _, c := range x {
			if s := textOf(c); s != "" {
				parts = append(parts, s)
			}
		}
		if len(parts) > 0 {
			return parts[len(parts)-1]
		}
	}
	return ""
}
