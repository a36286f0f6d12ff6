package ffmpeg

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// tempPrefix names an input's folder: perch-media-PID-random, so a later
// process can tell whose it is.
const tempPrefix = "perch-media-"

var sweepOnce sync.Once

// sweepStale removes the input folders of processes that died holding them
// (a SIGKILL mid-preprocessing leaves the uploaded media behind): those
// whose PID is gone, and unnamed ones (older builds) over a day old.
func sweepStale() {
	tmp := os.TempDir()
	entries, err := os.ReadDir(tmp)
	if err != nil {
		return
	}
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), tempPrefix)
		if !ok || !e.IsDir() {
			continue
		}
		pidText, _, named := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidText)
		switch {
		case named && err == nil && pid > 0:
			if pid == os.Getpid() || alive(pid) {
				continue
			}
		default:
			info, err := e.Info()
			if err != nil || time.Since(info.ModTime()) < 24*time.Hour {
				continue
			}
		}
		os.RemoveAll(filepath.Join(tmp, e.Name()))
	}
}

// alive reports whether a process with this PID exists (one of another
// user's answers EPERM: it exists).
func alive(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	err = p.Signal(syscall.Signal(0))
	return err == nil || errors.Is(err, syscall.EPERM)
}
