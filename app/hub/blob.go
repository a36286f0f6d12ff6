package hub

import (
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"perch/internal/durable"
)

var errStalled = errors.New("download stalled")

// fetchFile makes one file present in the snapshot: reuses its blob when
// the size matches, else downloads it, then links snapshots/<commit>/<path>.
func (h *Hub) fetchFile(ctx context.Context, repo Repo, commit string, f RemoteFile, i int, t *tracker) error {
	t.startFile(f, i)
	blob := h.blobPath(repo, f.Blob)
	if st, err := os.Stat(blob); err == nil && st.Size() == f.Size && st.Mode().IsRegular() {
		t.fileDone()
		return h.link(repo, commit, f)
	}
	bl, err := lock(ctx, filepath.Join(h.lockDir(repo), f.Blob+".lock"), nil)
	if err != nil {
		return fmt.Errorf("%s: %w", f.Path, err)
	}
	defer bl.unlock()
	if err := os.MkdirAll(filepath.Dir(blob), 0o755); err != nil {
		return diskError(err)
	}
	p := &partial{path: blob + ".incomplete", file: f}
	attempts := max(h.MaxAttempts, 1)
	for attempt := 1; ; attempt++ {
		err = h.fetchBlobOnce(ctx, repo, commit, p, t)
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			return fmt.Errorf("%s: %w (the partial download is kept; pull again to resume)", f.Path, ctx.Err())
		}
		if !isTransient(err) || attempt >= attempts {
			if isTransient(err) {
				return fmt.Errorf("%s: %w (after %d tries; the partial download is kept, pull again to resume)", f.Path, err, attempt)
			}
			return fmt.Errorf("%s: %w", f.Path, err)
		}
		select {
		case <-ctx.Done():
		case <-time.After(min(time.Duration(attempt)*500*time.Millisecond, 5*time.Second)):
		}
	}
	if err := os.Rename(p.path, blob); err != nil {
		return diskError(fmt.Errorf("%s: publish: %w", f.Path, err))
	}
	durable.SyncDir(filepath.Dir(blob))
	t.fileDone()
	return h.link(repo, commit, f)
}

// partial is a .incomplete file and the hash of its prefix, carried
// across attempts so a retry does not re-read what it already hashed.
type partial struct {
	path string
	file RemoteFile
	h    hash.Hash
	n    int64 // bytes hashed
}

func (p *partial) newHash() {
	if p.file.LFS {
		p.h = sha256.New()
	} else {
		p.h = sha1.New()
		fmt.Fprintf(p.h, "blob %d\x00", p.file.Size)
	}
	p.n = 0
}

// open opens the partial file and makes the hash cover its content,
// re-hashing from disk when needed; a file longer than the blob restarts.
func (p *partial) open(t *tracker) (*os.File, error) {
	fh, err := os.OpenFile(p.path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, diskError(err)
	}
	st, err := fh.Stat()
	if err != nil {
		fh.Close()
		return nil, err
	}
	size := st.Size()
	if size > p.file.Size {
		size = 0
	}
	if p.h == nil || p.n != size {
		p.newHash()
		if size > 0 {
			t.stage(StageChecking)
			if _, err := io.Copy(p.h, io.NewSectionReader(fh, 0, size)); err != nil {
				fh.Close()
				return nil, err
			}
			p.n = size
		}
	}
	if err := fh.Truncate(size); err != nil {
		fh.Close()
		return nil, diskError(err)
	}
	if _, err := fh.Seek(size, io.SeekStart); err != nil {
		fh.Close()
		return nil, err
	}
	t.setFileDone(size)
	return fh, nil
}

// restart empties the partial file.
func (p *partial) restart(fh *os.File, t *tracker) error {
	p.newHash()
	t.setFileDone(0)
	if err := fh.Truncate(0); err != nil {
		return err
	}
	_, err := fh.Seek(0, io.SeekStart)
	return err
}

// fetchBlobOnce makes one request for the rest of a blob and verifies it
// when complete. Failures worth a retry come back transient.
func (h *Hub) fetchBlobOnce(ctx context.Context, repo Repo, commit string, p *partial, t *tracker) (err error) {
	f := p.file
	fh, err := p.open(t)
	if err != nil {
		return err
	}
	keep := true
	defer func() {
		cerr := fh.Close()
		if err == nil && cerr != nil {
			err = diskError(cerr)
		}
		if err != nil && (!keep || isDiskFull(err) || errors.Is(err, ErrDiskFull)) {
			// A full disk gets its space back; corrupt bytes never stay.
			os.Remove(p.path)
			p.h = nil
			if keep {
				err = fmt.Errorf("%w; the partial file was removed: free at least %s and pull again", err, FormatBytes(f.Size))
			}
		}
	}()
	if p.n < f.Size {
		if err := h.download(ctx, repo, commit, p, fh, t); err != nil {
			if errors.Is(err, ErrChecksum) {
				keep = false
			}
			return err
		}
	}
	if got := hex.EncodeToString(p.h.Sum(nil)); got != f.Blob {
		keep = false
		kind := "git blob sha1"
		if f.LFS {
			kind = "sha256"
		}
		return fmt.Errorf("%w: %s is %s, the Hub lists %s; the file was discarded, pull again", ErrChecksum, kind, got, f.Blob)
	}
	if err := fh.Sync(); err != nil {
		return diskError(err)
	}
	return nil
}

// download streams the blob's remaining bytes into fh.
func (h *Hub) download(ctx context.Context, repo Repo, commit string, p *partial, fh *os.File, t *tracker) error {
	f := p.file
	idle := h.IdleTimeout
	if idle <= 0 {
		idle = 60 * time.Second
	}
	rctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	watchdog := time.AfterFunc(idle, func() { cancel(fmt.Errorf("%w: no data for %v", errStalled, idle)) })
	defer watchdog.Stop()

	u := fmt.Sprintf("%s/%s/resolve/%s/%s", h.Endpoint, repo, url.PathEscape(commit), escapePath(f.Path))
	resp, err := h.get(rctx, u, p.n)
	if err != nil {
		return stallCause(rctx, err)
	}
	defer resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusOK:
		if p.n > 0 { // the server ignored Range: start over
			if err := p.restart(fh, t); err != nil {
				return diskError(err)
			}
		}
	case http.StatusPartialContent:
		if err := checkContentRange(resp.Header.Get("Content-Range"), p.n, f.Size); err != nil {
			if rerr := p.restart(fh, t); rerr != nil {
				return diskError(rerr)
			}
			return transient(err)
		}
	case http.StatusRequestedRangeNotSatisfiable:
		if err := p.restart(fh, t); err != nil {
			return diskError(err)
		}
		return transient(errors.New("the Hub refused to resume; restarting the file"))
	default:
		return h.statusError(resp, fmt.Sprintf("%s: %s", repo, f.Path))
	}

	buf := make([]byte, 1<<20)
	for p.n < f.Size {
		want := int64(len(buf))
		if rest := f.Size - p.n; rest < want {
			want = rest
		}
		n, rerr := resp.Body.Read(buf[:want])
		if n > 0 {
			watchdog.Reset(idle)
			if _, werr := fh.Write(buf[:n]); werr != nil {
				return diskError(fmt.Errorf("write after %s of %s: %w", FormatBytes(p.n), FormatBytes(f.Size), bareError(werr)))
			}
			p.h.Write(buf[:n])
			p.n += int64(n)
			t.add(int64(n))
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return stallCause(rctx, transient(fmt.Errorf("connection lost after %s of %s: %w", FormatBytes(p.n), FormatBytes(f.Size), rerr)))
		}
	}
	if p.n < f.Size {
		return transient(fmt.Errorf("connection closed after %s of %s", FormatBytes(p.n), FormatBytes(f.Size)))
	}
	var extra [1]byte
	if n, _ := io.ReadFull(resp.Body, extra[:]); n > 0 {
		return fmt.Errorf("%w: the Hub sent more than the listed %d bytes", ErrChecksum, f.Size)
	}
	return nil
}

// stallCause reports the watchdog's reason rather than "context canceled".
func stallCause(ctx context.Context, err error) error {
	if cause := context.Cause(ctx); errors.Is(cause, errStalled) {
		return transient(cause)
	}
	return err
}

// checkContentRange accepts "bytes <offset>-<size-1>/<size>" (or "/*").
func checkContentRange(v string, offset, size int64) error {
	bad := fmt.Errorf("the Hub answered Range bytes=%d- with Content-Range %q", offset, truncate(v, 80))
	spec, ok := strings.CutPrefix(v, "bytes ")
	if !ok {
		return bad
	}
	rng, total, ok := strings.Cut(spec, "/")
	first, last, ok2 := strings.Cut(rng, "-")
	if !ok || !ok2 {
		return bad
	}
	a, err1 := strconv.ParseInt(first, 10, 64)
	b, err2 := strconv.ParseInt(last, 10, 64)
	if err1 != nil || err2 != nil || a != offset || b != size-1 {
		return bad
	}
	if total != "*" {
		if n, err := strconv.ParseInt(total, 10, 64); err != nil || n != size {
			return bad
		}
	}
	return nil
}

func escapePath(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return strings.Join(segs, "/")
}

// link points snapshots/<commit>/<path> at ../../blobs/<blob> (relative,
// as huggingface_hub does), replacing any older link atomically.
func (h *Hub) link(repo Repo, commit string, f RemoteFile) error {
	p := filepath.Join(h.snapshotDir(repo, commit), filepath.FromSlash(f.Path))
	target := strings.Repeat("../", strings.Count(f.Path, "/")+2) + "blobs/" + f.Blob
	if cur, err := os.Readlink(p); err == nil && cur == target {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return diskError(err)
	}
	tmp := p + ".perch-link"
	os.Remove(tmp)
	if err := os.Symlink(target, tmp); err != nil {
		return diskError(fmt.Errorf("link %s: %w", f.Path, err))
	}
	if err := os.Rename(tmp, p); err != nil {
		os.Remove(tmp)
		return diskError(fmt.Errorf("link %s: %w", f.Path, err))
	}
	return nil
}

// bareError drops the absolute path from a file-system error, so messages
// that may reach API callers do not reveal the user's folders.
func bareError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %w", pe.Op, pe.Err)
	}
	return err
}
