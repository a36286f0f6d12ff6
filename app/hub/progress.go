package hub

import (
	"fmt"
	"time"
)

// tracker turns byte counts into Progress updates, at most every 100 ms
// plus one at each file boundary.
type tracker struct {
	p        Progress
	emit     func(Progress)
	files    []RemoteFile
	last     time.Time // last emit
	rateAt   time.Time // start of the current rate window
	rateN    int64     // bytes received in the window
	received int64
}

const progressEvery = 100 * time.Millisecond

func newTracker(repo string, files []RemoteFile, emit func(Progress)) *tracker {
	t := &tracker{emit: emit, files: files}
	t.p = Progress{Repo: repo, Stage: StageDownloading, FileCount: len(files), ETA: -1}
	for _, f := range files {
		t.p.BytesTotal += f.Size
	}
	t.rateAt = time.Now()
	return t
}

func (t *tracker) startFile(f RemoteFile, i int) {
	t.p.File, t.p.FileIndex, t.p.FileTotal, t.p.FileDone = f.Path, i+1, f.Size, 0
	t.p.Stage = StageDownloading
	t.flush()
}

// setFileDone sets how much of the current file is on disk; the whole-pull
// count moves by the difference (a restart takes credited bytes back).
func (t *tracker) setFileDone(n int64) {
	t.p.BytesDone += n - t.p.FileDone
	t.p.FileDone = n
	t.p.Stage = StageDownloading
}

// fileDone marks the current file complete (its bytes may have been
// credited up front or received).
func (t *tracker) fileDone() {
	t.setFileDone(t.p.FileTotal)
	t.flush()
}

func (t *tracker) add(n int64) {
	t.p.FileDone += n
	t.p.BytesDone += n
	t.received += n
	t.rateN += n
	if time.Since(t.last) >= progressEvery {
		t.flush()
	}
}

func (t *tracker) stage(s Stage) {
	t.p.Stage = s
	t.flush()
}

func (t *tracker) flush() {
	now := time.Now()
	if dt := now.Sub(t.rateAt); dt >= progressEvery {
		inst := float64(t.rateN) / dt.Seconds()
		if t.p.Rate == 0 {
			t.p.Rate = inst
		} else {
			t.p.Rate = 0.7*t.p.Rate + 0.3*inst
		}
		t.rateAt, t.rateN = now, 0
	}
	t.p.ETA = -1
	if t.p.Rate > 0 {
		rest := float64(t.p.BytesTotal - t.p.BytesDone)
		t.p.ETA = time.Duration(rest / t.p.Rate * float64(time.Second))
	}
	t.last = now
	t.emit(t.p)
}

// FormatBytes prints a byte count for people: "5.1 GB" (decimal units, as
// the Hub and Finder show sizes).
func FormatBytes(n int64) string {
	const unit = 1000
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	f, i := float64(n), 0
	for f >= unit && i < 5 {
		f /= unit
		i++
	}
	return fmt.Sprintf("%.1f %cB", f, " kMGTP"[i])
}
