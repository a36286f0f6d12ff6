// Package trainset turns training data into the rows engine/train trains
// on: JSONL dataset folders (mlx-lm and TRL row shapes: chat messages,
// prompt/completion, text, pre-tokenized ids, preference pairs, unpaired
// KTO rows) and an app's rows (Example), rendered with the model's own chat
// template and tokenized as a chat request is, media through the model's
// processor.
//
// Data flows one way: files or examples in, train.Row out. It owns the
// formats, their limits (line and token budgets, media files inside the
// folder) and the notes about skipped rows; the trainer owns everything
// after the rows exist.
package trainset

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"perch/engine/regfile"
	"perch/engine/train"
)

// MaxDatasetTokens bounds the token ids a dataset folder may hold in
// memory (1 GiB of ids); a bigger one is refused while it is read.
const MaxDatasetTokens = 1 << 28

// Split is one encoded file of a dataset folder.
type Split struct {
	Name  string // "train.jsonl"
	Rows  []train.Row
	Notes Notes
}

// Dataset is a folder's splits; Valid and Test are nil when absent.
type Dataset struct {
	Train, Valid, Test *Split
}

// Notes summarise what encoding changed: rows cut to the maximum length
// and rows skipped because nothing was left to learn.
type Notes struct {
	Cut, Skipped int
	First        []string // the first few, each naming its line
}

const maxNotes = 5

func (n *Notes) add(src, msg string, skipped bool) {
	if skipped {
		n.Skipped++
	} else {
		n.Cut++
	}
	if len(n.First) < maxNotes {
		n.First = append(n.First, src+": "+msg)
	}
}

// String is a one-line summary ("" when nothing changed).
func (n Notes) String() string {
	if n.Cut+n.Skipped == 0 {
		return ""
	}
	s := fmt.Sprintf("%d rows cut to the maximum length, %d skipped", n.Cut, n.Skipped)
	if len(n.First) > 0 {
		s += " (" + strings.Join(n.First, "; ")
		if n.Cut+n.Skipped > len(n.First) {
			s += "; …"
		}
		s += ")"
	}
	return s
}

// LoadFolder reads dir/train.jsonl (required) and dir/valid.jsonl,
// dir/test.jsonl (optional; only with enc.Test), one line at a time. The first malformed line
// stops the load with a *LineError naming its file and line.
func LoadFolder(ctx context.Context, dir string, enc *Encoder) (*Dataset, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("training data: %w", err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("training data %s is a file: give the folder that holds train.jsonl (and valid.jsonl)", dir)
	}
	budget := MaxDatasetTokens
	ds := &Dataset{}
	if enc.Dir == "" {
		e := *enc
		e.Dir, enc = dir, &e
	}
	for _, s := range []struct {
		name     string
		out      **Split
		required bool
	}{{"train.jsonl", &ds.Train, true}, {"valid.jsonl", &ds.Valid, false}, {"test.jsonl", &ds.Test, false}} {
		if s.out == &ds.Test && !enc.Test {
			continue // read only for perch train --test
		}
		f, err := regfile.Open(filepath.Join(dir, s.name))
		if errors.Is(err, fs.ErrNotExist) && !s.required {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("training data: %w", err)
		}
		split, err := ReadSplit(ctx, f, s.name, enc, &budget)
		f.Close()
		if err != nil {
			return nil, err
		}
		*s.out = split
	}
	return ds, nil
}

// ReadSplit encodes one JSONL stream called name. budget, when not nil, is
// the number of token ids still allowed and is decreased.
func ReadSplit(ctx context.Context, r io.Reader, name string, enc *Encoder, budget *int) (*Split, error) {
	s := &Split{Name: name}
	err := eachLine(ctx, r, name, func(line []byte, n int) error {
		row, note, ok, err := enc.Encode(ctx, line)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return &LineError{name, n, err}
		}
		src := fmt.Sprintf("%s:%d", name, n)
		if note != "" {
			s.Notes.add(src, note, !ok)
		}
		if !ok {
			return nil
		}
		if budget != nil {
			if *budget -= row.Tokens(); *budget < 0 {
				return &LineError{name, n, fmt.Errorf("the dataset holds more than %d tokens, the most one run loads: split it or use fewer rows", MaxDatasetTokens)}
			}
		}
		row.Source = src
		s.Rows = append(s.Rows, row)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(s.Rows) == 0 {
		if s.Notes.Skipped > 0 {
			return nil, fmt.Errorf("%s: every row was skipped: %s", name, s.Notes)
		}
		return nil, fmt.Errorf("%s has no rows", name)
	}
	return s, nil
}
