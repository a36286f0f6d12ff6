package train

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"perch/app/cli"
	"perch/engine/train"
)

// maxStreamLine bounds one line of a metrics stream (they are ~300 bytes).
const maxStreamLine = 1 << 20

func runTrainWatch(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("train watch", flag.ContinueOnError)
	fs.SetOutput(stderr)
	jsonOut := fs.Bool("json", false, "print the stream's JSON lines as they come")
	wait := fs.Duration("wait", 10*time.Second, "how long to wait for a run to start writing into the folder")
	words, err := cli.ParseFlags(fs, args)
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
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	p := newTrainPrinter(stdout, stderr, *jsonOut)
	code, err := watchStream(ctx, filepath.Join(words[0], train.StreamFile), p, 300*time.Millisecond, *wait)
	if err != nil {
		fmt.Fprintln(stderr, "perch train watch:", err)
		return 1
	}
	return code
}

// watchStream follows a metrics stream until its run ends (the last
// started run's done or error line), the run is found dead (no process
// holds the stream) or ctx is cancelled; it waits up to wait for the file
// to appear. It returns 1 when the run ended with an error or died.
func watchStream(ctx context.Context, path string, p *trainPrinter, poll, wait time.Duration) (int, error) {
	var f *os.File
	deadline := time.Now().Add(wait)
	for {
		var err error
		if f, err = os.Open(path); err == nil {
			break
		}
		if !errors.Is(err, os.ErrNotExist) {
			return 1, err
		}
		if time.Now().After(deadline) {
			return 1, fmt.Errorf("no run in %s (no %s after %v): start one with perch train --adapter-path %s", filepath.Dir(path), train.StreamFile, wait, filepath.Dir(path))
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
	dead := false
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
		if dead { // read once more after the run was found gone: its last lines are in
			return 1, fmt.Errorf("the run in %s stopped after step %d without finishing (killed or crashed): continue it with perch train --resume %s and the same flags",
				filepath.Dir(path), w.step, filepath.Dir(path))
		}
		if live, err := train.RunLive(filepath.Dir(path)); err == nil && !live {
			dead = true
			continue
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
	step    int // the last step line's
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
	l, err := parseTrainLine(line)
	if len(line) > maxStreamLine || err != nil || l.Type == "" {
		if w.p.json {
			fmt.Fprintf(w.p.stderr, "perch train watch: line %d of the stream is not an event; skipped\n", w.n)
		} else {
			w.p.say("note: line %d of the stream is not an event; skipped", w.n)
		}
		return
	}
	switch l.Type {
	case "step":
		w.step = l.Step
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
