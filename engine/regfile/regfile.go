// Package regfile opens files that come from outside (datasets, media,
// adapters) so that a FIFO, a device or a folder in their place is refused
// at once instead of blocking a read forever or feeding it endless bytes:
// the type is checked before the file is opened for reading, the open does
// not block, and reads are capped by the bytes actually read, never by the
// size Stat reports (0 for a device).
package regfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// ErrNotRegular is wrapped by the error for a path that is not a regular file.
var ErrNotRegular = errors.New("not a regular file")

// Open opens path for reading if it is a regular file (symlinks followed).
func Open(path string) (*os.File, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if err := check(path, st); err != nil {
		return nil, err
	}
	// O_NONBLOCK: if a FIFO took the file's place since the Stat, the open
	// returns at once and the Fstat below refuses it.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	if st, err = f.Stat(); err == nil {
		err = check(path, st)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

func check(path string, st fs.FileInfo) error {
	if st.Mode().IsRegular() {
		return nil
	}
	what := "a special file"
	switch m := st.Mode(); {
	case m.IsDir():
		what = "a folder"
	case m&fs.ModeNamedPipe != 0:
		what = "a named pipe (FIFO)"
	case m&fs.ModeDevice != 0:
		what = "a device"
	case m&fs.ModeSocket != 0:
		what = "a socket"
	}
	return &fs.PathError{Op: "open", Path: path, Err: fmt.Errorf("%w: it is %s", ErrNotRegular, what)}
}

// ReadFile reads a regular file of at most limit bytes; a longer one is
// refused after limit+1 bytes have been read.
func ReadFile(path string, limit int64) ([]byte, error) {
	f, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s: over the %d-byte limit", path, limit)
	}
	return data, nil
}

// Capped reads r and fails with an error naming what once more than limit
// bytes have come through.
func Capped(r io.Reader, limit int64, what string) io.Reader {
	return &capped{r: r, left: limit, limit: limit, what: what}
}

type capped struct {
	r           io.Reader
	left, limit int64
	what        string
}

func (c *capped) Read(p []byte) (int, error) {
	if c.left < 0 {
		return 0, fmt.Errorf("%s is over the %d-byte limit", c.what, c.limit)
	}
	if int64(len(p)) > c.left+1 {
		p = p[:c.left+1]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	if c.left < 0 {
		return n - int(-c.left), fmt.Errorf("%s is over the %d-byte limit", c.what, c.limit)
	}
	return n, err
}
