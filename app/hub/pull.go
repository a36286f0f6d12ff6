package hub

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"perch/engine/gemma4"
)

const repoLockName = "perch-pull.lock"

// Stage says what a pull is doing.
type Stage string

const (
	StageWaiting     Stage = "waiting"     // another pull of this repo holds the lock
	StageListing     Stage = "listing"     // asking the Hub for the file list
	StageChecking    Stage = "checking"    // re-hashing a partial download before resuming
	StageDownloading Stage = "downloading" // bytes flowing
	StageCached      Stage = "cached"      // complete in the cache; no request made
	StageDone        Stage = "done"
)

// Progress is one update of a pull, for a progress bar.
type Progress struct {
	Repo      string
	Stage     Stage
	File      string // the file in flight
	FileIndex int    // 1-based
	FileCount int
	FileDone  int64
	FileTotal int64
	// BytesDone counts bytes already in the cache (whole or partial files)
	// plus bytes received; BytesTotal is the size of every selected file.
	BytesDone  int64
	BytesTotal int64
	Rate       float64       // bytes/s received, smoothed
	ETA        time.Duration // -1 when unknown
}

// PullOptions adjust a pull.
type PullOptions struct {
	// Update asks the Hub for the revision's newest commit even when a
	// complete snapshot is cached (otherwise a cached model costs no request).
	Update bool
	// Context is the context length for the fit check (0: DefaultContext).
	Context int
	// SkipFit downloads even when the model does not fit this machine.
	SkipFit bool
}

// Pull is PullWith with default options.
func (h *Hub) Pull(ctx context.Context, repoID, rev string, progress func(Progress)) (string, error) {
	return h.PullWith(ctx, repoID, rev, PullOptions{}, progress)
}

// PullWith makes repo@rev (rev "" means "main") complete in the cache and
// returns its snapshot folder. A complete cached snapshot is returned
// without a request unless opts.Update. Before any weight byte it checks
// that the model fits this machine and that the disk has room. Each file
// is resumed from <blob>.incomplete, verified (sha256 for LFS, git blob
// sha1 otherwise) and only then renamed into blobs/. Cancelling ctx stops
// the pull and keeps partial files for the next one. progress may be nil;
// it is called on the caller's goroutine.
func (h *Hub) PullWith(ctx context.Context, repoID, rev string, opts PullOptions, progress func(Progress)) (string, error) {
	if rev == "" {
		rev = "main"
	}
	repo, err := ParseRepo(repoID)
	if err != nil {
		return "", err
	}
	if err := CheckRevision(rev); err != nil {
		return "", err
	}
	if progress == nil {
		progress = func(Progress) {}
	}
	if !opts.Update {
		if dir, err := h.Snapshot(repoID, rev); err == nil {
			progress(Progress{Repo: repo.String(), Stage: StageCached, ETA: -1})
			return dir, nil
		}
	}
	if h.Offline {
		return "", fmt.Errorf("%s@%s: %w", repo, rev, ErrOffline)
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	l, err := lock(ctx, filepath.Join(h.lockDir(repo), repoLockName), func() {
		progress(Progress{Repo: repo.String(), Stage: StageWaiting, ETA: -1})
	})
	if err != nil {
		return "", fmt.Errorf("%s: waiting for another download: %w", repo, err)
	}
	defer l.unlock()
	if !opts.Update { // the other holder may have finished it
		if dir, err := h.Snapshot(repoID, rev); err == nil {
			progress(Progress{Repo: repo.String(), Stage: StageCached, ETA: -1})
			return dir, nil
		}
	}

	progress(Progress{Repo: repo.String(), Stage: StageListing, ETA: -1})
	listing, err := h.FetchListing(ctx, repo.String(), rev)
	if err != nil {
		return "", err
	}
	files := selectFiles(listing.Files)
	if len(files) == 0 {
		return "", fmt.Errorf("%s@%s: no model files in the repo", repo, rev)
	}
	t := newTracker(repo.String(), files, progress)
	if err := h.preflightDisk(repo, files); err != nil {
		return "", err
	}
	fitDone := opts.SkipFit
	for i, f := range files {
		if !fitDone && strings.HasSuffix(f.Path, ".safetensors") {
			if err := h.fitBeforeDownload(repo, listing, opts.Context); err != nil {
				return "", err
			}
			fitDone = true
		}
		if err := h.fetchFile(ctx, repo, listing.Commit, f, i, t); err != nil {
			return "", err
		}
	}
	if rev != listing.Commit {
		if err := writeFileAtomic(h.refPath(repo, rev), []byte(listing.Commit)); err != nil {
			return "", diskError(fmt.Errorf("write refs/%s: %w", rev, err))
		}
	}
	dir := h.snapshotDir(repo, listing.Commit)
	if err := checkSnapshot(dir); err != nil {
		return "", fmt.Errorf("%s@%s: downloaded, but %w", repo, rev, err)
	}
	t.stage(StageDone)
	return dir, nil
}

// FetchListing asks the Hub for a revision's files with sizes and hashes.
func (h *Hub) FetchListing(ctx context.Context, repoID, rev string) (*Listing, error) {
	repo, err := ParseRepo(repoID)
	if err != nil {
		return nil, err
	}
	if err := CheckRevision(rev); err != nil {
		return nil, err
	}
	if h.Offline {
		return nil, fmt.Errorf("%s@%s: %w", repo, rev, ErrOffline)
	}
	u := fmt.Sprintf("%s/api/models/%s/revision/%s?blobs=true", h.Endpoint, repo, url.PathEscape(rev))
	resp, err := h.get(ctx, u, 0)
	if err != nil {
		return nil, fmt.Errorf("%s@%s: list files: %w", repo, rev, err)
	}
	if resp.StatusCode != 200 {
		return nil, h.statusError(resp, fmt.Sprintf("%s@%s", repo, rev))
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxListingBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%s@%s: list files: %w", repo, rev, transient(err))
	}
	return ParseListing(repo, data)
}

// selectFiles keeps what a checkpoint needs (as mlx-lm's allow patterns
// do): JSON, safetensors, chat templates, tokenizer models and text files.
// Small files come first, config.json leading, so the fit check can run
// before any weight byte.
func selectFiles(all []RemoteFile) []RemoteFile {
	var out []RemoteFile
	for _, f := range all {
		base := f.Path[strings.LastIndexByte(f.Path, '/')+1:]
		ext := filepath.Ext(base)
		switch {
		case ext == ".json" || ext == ".safetensors" || ext == ".jinja" || ext == ".tiktoken",
			base == "tokenizer.model", ext == ".txt" && !strings.EqualFold(base, "LICENSE.txt"):
			out = append(out, f)
		}
	}
	rank := func(f RemoteFile) int {
		switch {
		case f.Path == "config.json":
			return 0
		case !strings.HasSuffix(f.Path, ".safetensors"):
			return 1
		}
		return 2
	}
	sort.SliceStable(out, func(i, j int) bool {
		if ri, rj := rank(out[i]), rank(out[j]); ri != rj {
			return ri < rj
		}
		return out[i].Path < out[j].Path
	})
	return out
}

// preflightDisk refuses a pull the disk cannot hold (plus DiskReserve)
// before any byte is written, crediting blobs and partials already there.
func (h *Hub) preflightDisk(repo Repo, files []RemoteFile) error {
	var need int64
	for _, f := range files {
		have := int64(0)
		if st, err := os.Stat(h.blobPath(repo, f.Blob)); err == nil && st.Size() == f.Size {
			have = f.Size
		} else if st, err := os.Stat(h.blobPath(repo, f.Blob) + ".incomplete"); err == nil && st.Size() <= f.Size {
			have = st.Size()
		}
		need += f.Size - have
	}
	if err := os.MkdirAll(h.Dir, 0o755); err != nil {
		return diskError(fmt.Errorf("create the cache folder: %w", err))
	}
	free, err := h.diskFree(h.Dir)
	if err != nil {
		return nil // unknown: let the writes tell
	}
	if free < need+h.DiskReserve {
		return fmt.Errorf("%w for %s: it needs %s more (plus %s kept free), the disk has %s free; free some space or set HF_HUB_CACHE to a bigger disk",
			ErrDiskFull, repo, FormatBytes(need), FormatBytes(h.DiskReserve), FormatBytes(free))
	}
	return nil
}

// fitBeforeDownload runs the fit check on the cached config.json and the
// listed weight sizes, so a model that cannot run is never downloaded.
func (h *Hub) fitBeforeDownload(repo Repo, l *Listing, contextLen int) error {
	cfg, ok := l.File("config.json")
	if !ok {
		return fmt.Errorf("%s: the repo has no config.json; it is not a model Perch can run", repo)
	}
	data, err := os.ReadFile(h.blobPath(repo, cfg.Blob))
	if err != nil {
		return err
	}
	d, err := gemma4.DescribeRemote(data, l.WeightBytes())
	if err != nil {
		return fmt.Errorf("%s: fit check: %w", repo, err)
	}
	b, err := h.memory()
	if err != nil {
		return fmt.Errorf("fit check: %w (use --force to skip it)", err)
	}
	est := EstimateMemory(d, h.Backend, contextLen, b)
	if !est.Fits {
		return &FitError{Model: repo.String(), Estimate: est}
	}
	return nil
}

// writeFileAtomic writes via a temp file, fsync and rename.
func writeFileAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return err
	}
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}

// diskError marks a write failure caused by a full disk.
func diskError(err error) error {
	if isDiskFull(err) && !errors.Is(err, ErrDiskFull) {
		return fmt.Errorf("%w: %v", ErrDiskFull, err)
	}
	return err
}
