package trainset

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
)

// MaxLineBytes bounds one JSONL line; a longer line is an error naming it
// (media travel as file paths, so real rows are far smaller).
const MaxLineBytes = 16 << 20

// LineError is a dataset error at one line of one file.
type LineError struct {
	File string // base name, as the user sees it in the folder
	Line int
	Err  error
}

func (e *LineError) Error() string { return fmt.Sprintf("%s:%d: %v", e.File, e.Line, e.Err) }
func (e *LineError) Unwrap() error { return e.Err }

// eachLine calls fn with every non-blank line of r and its 1-based number,
// reading one line at a time: a huge file costs one line of memory, and the
// first bad line stops the read. ctx is checked between lines.
func eachLine(ctx context.Context, r io.Reader, name string, fn func(line []byte, n int) error) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var long []byte // a line that spans several buffer fills
	for n := 1; ; n++ {
		if n%256 == 1 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		long = long[:0]
		var line []byte
		var err error
		for {
			var chunk []byte
			chunk, err = br.ReadSlice('\n')
			if len(long)+len(chunk) > MaxLineBytes {
				return &LineError{name, n, fmt.Errorf("the line is longer than %d MiB", MaxLineBytes>>20)}
			}
			if errors.Is(err, bufio.ErrBufferFull) {
				long = append(long, chunk...)
				continue
			}
			if len(long) > 0 {
				line = append(long, chunk...)
			} else {
				line = chunk
			}
			break
		}
		if err != nil && err != io.EOF {
			return fmt.Errorf("%s:%d: %w", name, n, err)
		}
		if n == 1 {
			if bytes.HasPrefix(line, []byte("\xff\xfe")) || bytes.HasPrefix(line, []byte("\xfe\xff")) {
				return &LineError{name, n, errors.New("the file is UTF-16 (it starts with a UTF-16 byte order mark): save it as UTF-8")}
			}
			line = bytes.TrimPrefix(line, []byte("\xef\xbb\xbf")) // a UTF-8 byte order mark, as Windows editors write
		}
		if line = bytes.TrimSpace(line); len(line) > 0 {
			if ferr := fn(line, n); ferr != nil {
				return ferr
			}
		}
		if err == io.EOF {
			return nil
		}
	}
}
