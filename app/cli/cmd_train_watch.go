package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"time"

	"perch/engine/train"
)

// maxStreamLine bounds one line of a metrics stream (they are ~300 bytes).
const maxStreamLine = 1 << 20

func runTrainWatch(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("train watch", flag.ContinueOnError)
	fs.SetOutput(stderr)
	jsonOut := fs.Bool("json", false, "print the stream's JSON lines as they come")
	words, err := parseFlags(fs, args)
	if err == flag.ErrHelp {
		return 0
	}
	if err == nil && len(words) != 1 {
		err = errors.New("usage: perch train watch ADAPTER_DIR [--json]")
	}
	if err != nil {
		fmt.Fprintln(stderr, "perch train watch:", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	p := newTrainPrinter(stdout, stderr, *jsonOut)
	code, err := watchStream(ctx, filepath.Join(words[0], train.StreamFile), p, 300*time.Millisecond)
	if err != nil {
		fmt.Fprintln(stderr, "perch train watch:", err)
		return 1
	}
	return code
}

// watchStream follows a metrics stream until its run ends (the last
// started run's done or error line) or ctx is cancelled, waiting for the
// file to appear. It returns 1 when the run ended with an error.
func watchStream(ctx context.Context, path string, p *trainPrinter, poll time.Duration) (int, error) {
	var f *os.File
	for {
		var err error
		if f, err = os.Open(path); err == nil {
			break
		}
		if !errors.Is(err, os.ErrNotExist) {
			return 1, err
		}
		select {
		case <-ctx.Done():
			return 0, nil
		case <-time.After(poll):
		}
	}
	defer f.Close()
	w := &streamFollower{p: p}
	r := bufio.NewReaderSize(f, 64<<10)
	for {
		chunk, err := r.ReadSlice('\n')
		w.feed(chunk)
		switch {
		case err == nil || errors.Is(err, bufio.ErrBufferFull):
			continue
		case err != io.EOF:
			return 1, err
		}
		if w.ended {
			return w.code, nil
		}
		select {
		case <-ctx.Done():
			return 0, nil
		case <-time.After(poll):
		}
	}
}

// streamFollower assembles stream bytes into lines and prints them.
type streamFollower struct {
	p       *trainPrinter
	partial []byte
	n       int
	ended   bool // the last run in the stream has ended
	code    int
}

func (w *streamFollower) feed(chunk []byte) {
	for len(chunk) > 0 {
		i := bytes.IndexByte(chunk, '\n')
		if i < 0 {
			if len(w.partial)+len(chunk) <= maxStreamLine {
				w.partial = append(w.partial, chunk...)
			}
			return
		}
		line := append(w.partial, chunk[:i]...)
		w.partial, chunk = nil, chunk[i+1:]
		w.n++
		w.show(bytes.TrimSpace(line))
	}
}

func (w *streamFollower) show(line []byte) {
	if len(line) == 0 {
		return
	}
	var l trainLine
	if len(line) > maxStreamLine || json.Unmarshal(line, &l) != nil || l.Type == "" {
		if w.p.json {
			fmt.Fprintf(w.p.stderr, "perch train watch: line %d of the stream is not an event; skipped\n", w.n)
		} else {
			w.p.say("note: line %d of the stream is not an event; skipped", w.n)
		}
		return
	}
	switch l.Type {
	case "started":
		w.ended, w.code = false, 0
	case "done":
		w.ended = true
	case "error":
		w.ended, w.code = true, 1
	}
	if w.p.json {
		fmt.Fprintf(w.p.stdout, "%s\n", line)
		return
	}
	w.p.line(l)
}
