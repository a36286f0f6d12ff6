package trainset

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strings"

	"perch/engine/chattemplate"
	"perch/engine/gemma4/processor"
	"perch/engine/prompt"
	"perch/engine/regfile"
	"perch/engine/train"
)

// Media rows. A chat row's image, audio and video parts go through the
// model's processor exactly as a chat request's attachments do (decode,
// preprocess, placeholder expansion). The row keeps its prompt ids and a
// mediaSource and lets the prepared media go; the trainer prepares them
// again just before the row's step (train.Row.WithMedia), so a dataset of
// photos does not sit in memory.

// maxMediaFileBytes bounds one media file of a training row.
var maxMediaFileBytes = map[string]int64{"image": 50 << 20, "audio": 200 << 20, "video": 2 << 30}

// mediaSource is how a row prepares its media again.
type mediaSource struct {
	proc *processor.Processor
	dir  string           // the dataset folder: media paths are relative to it
	msgs []prompt.Message // the prompt, media parts naming their files (Data nil)
	opts processor.PrepareOptions
	n    int // prompt length, checked when prepared again
	// read, when set, gives a media part's bytes by its name instead of
	// a file under dir (Encoder.ReadMedia).
	read func(kind, name string) ([]byte, error)
}

// Prepare prepares the row's media again (train.MediaSource), refusing
// files that no longer give the prompt the dataset was read with.
func (s *mediaSource) Prepare(ctx context.Context) (*processor.Prepared, error) {
	prep, err := s.prepare(ctx)
	if err != nil {
		return nil, err
	}
	if len(prep.IDs) != s.n {
		return nil, fmt.Errorf("its media now give a %d-token prompt, %d when the dataset was read (a file changed?)", len(prep.IDs), s.n)
	}
	return prep, nil
}

// prepare reads the files and runs the processor over the prompt.
func (s *mediaSource) prepare(ctx context.Context) (*processor.Prepared, error) {
	msgs := make([]prompt.Message, len(s.msgs))
	for i, m := range s.msgs {
		msgs[i] = m
		msgs[i].Content = append([]prompt.Part(nil), m.Content...)
		for j := range msgs[i].Content {
			p := &msgs[i].Content[j]
			if p.Type == prompt.Text {
				continue
			}
			var data []byte
			var err error
			if s.read != nil {
				data, err = s.read(string(p.Type), p.Name)
			} else {
				data, err = readMedia(s.dir, p.Name, string(p.Type))
			}
			if err != nil {
				return nil, err
			}
			p.Data = data
		}
	}
	return s.proc.Prepare(ctx, msgs, s.opts)
}

func readMedia(dir, name, kind string) ([]byte, error) {
	path, err := insideFolder(dir, name)
	if err != nil {
		return nil, fmt.Errorf("%s %q: %w", kind, name, err)
	}
	f, err := regfile.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%s %q: %w", kind, name, err)
	}
	defer f.Close()
	limit := maxMediaFileBytes[kind]
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("%s %q: %w", kind, name, err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s %q is over the %d MiB a training %s may be", kind, name, limit>>20, kind)
	}
	return data, nil
}

// insideFolder resolves a media part's file name against the data folder:
// relative, without "..", and inside the folder once symlinks are resolved
// (Lstat and Readlink only: nothing outside is opened).
func insideFolder(dir, name string) (string, error) {
	if name == "" {
		return "", errors.New("no file name")
	}
	if filepath.IsAbs(name) || strings.HasPrefix(name, "/") || strings.HasPrefix(name, `\`) || filepath.VolumeName(name) != "" {
		return "", errors.New("absolute paths are refused: name the file relative to the data folder")
	}
	for _, el := range strings.FieldsFunc(name, func(r rune) bool { return r == '/' || r == '\\' }) {
		if el == ".." {
			return "", errors.New(`".." is refused: media files must be inside the data folder`)
		}
	}
	root, err := filepath.Abs(dir)
	if err == nil {
		root, err = filepath.EvalSymlinks(root)
	}
	if err != nil {
		return "", fmt.Errorf("the data folder: %w", err)
	}
	real, err := filepath.EvalSymlinks(filepath.Join(root, name))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", errors.New("no such file in the data folder")
		}
		return "", err
	}
	if rel, err := filepath.Rel(root, real); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", errors.New("it is a symlink to a file outside the data folder: copy the file in instead")
	}
	return real, nil
}

// withMedia lays a chat row's prompt out through the processor: it returns
// the prompt ids with the media expanded, and row keeps the vision blocks
// and what it needs to prepare its media again.
func (e *Encoder) withMedia(ctx context.Context, prompt []chattemplate.Message, refs []MediaRef, rec *record, row *train.Row) ([]int32, error) {
	if e.Processor == nil {
		return nil, fmt.Errorf("%s parts need the model's processor (the model has no towers?)", refs[0].Kind)
	}
	if len(rec.Tools) > 0 {
		return nil, errors.New("rows with media parts cannot also carry tools")
	}
	msgs, err := promptMessages(prompt, refs)
	if err != nil {
		return nil, err
	}
	// Context: the processor measures the media from their headers and
	// probes first and refuses a prompt that cannot be under MaxLen
	// before decoding any of them.
	src := &mediaSource{proc: e.Processor, dir: e.Dir, msgs: msgs, read: e.ReadMedia, opts: processor.PrepareOptions{Context: e.maxLen()}}
	if rec.EnableThinking != nil {
		src.opts.EnableThinking = *rec.EnableThinking
	}
	prep, err := src.prepare(ctx)
	var long *processor.ContextError
	if errors.As(err, &long) {
		return nil, &promptTooLong{long}
	}
	if err != nil {
		return nil, err
	}
	src.n = len(prep.IDs)
	row.SetMediaSource(src)
	row.Blocks = prep.Blocks
	return prep.IDs, nil
}

// promptTooLong is a media row whose prompt cannot be under MaxLen: the
// row is skipped with a note, as a text row whose prompt alone is too long.
type promptTooLong struct{ *processor.ContextError }

func (e *promptTooLong) note() string {
	if e.AtLeast {
		return fmt.Sprintf("the prompt with its media is at least %d tokens (measured before decoding), not under --max-seq-len %d: row skipped",
			e.Prompt, e.Context)
	}
	return fmt.Sprintf("the prompt with its media is %d tokens, not under --max-seq-len %d: row skipped", e.Prompt, e.Context)
}

// promptMessages turns template messages and their media files (in
// document order) into the processor's messages.
func promptMessages(msgs []chattemplate.Message, refs []MediaRef) ([]prompt.Message, error) {
	out := make([]prompt.Message, 0, len(msgs))
	k := 0
	for _, m := range msgs {
		if len(m.ToolCalls) > 0 || m.ToolCallID != "" {
			return nil, errors.New("rows with media parts cannot also carry tool calls")
		}
		pm := prompt.Message{Role: prompt.Role(m.Role), Thinking: m.Reasoning}
		if m.Parts == nil {
			pm.Content = []prompt.Part{{Type: prompt.Text, Text: m.Content}}
		}
		for _, p := range m.Parts {
			if p.Type == "text" {
				pm.Content = append(pm.Content, prompt.Part{Type: prompt.Text, Text: p.Text})
				continue
			}
			pm.Content = append(pm.Content, prompt.Part{Type: prompt.PartType(p.Type), Name: refs[k].Path, Hash: refs[k].Hash})
			k++
		}
		out = append(out, pm)
	}
	return out, nil
}
