package hub

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"perch/engine/gemma4"
)

// FitDir estimates a local checkpoint folder (a snapshot or any directory
// holding config.json and safetensors).
func (h *Hub) FitDir(dir string, contextLen int) (*Estimate, error) {
	if _, err := os.Stat(filepath.Join(dir, "config.json")); err != nil {
		return nil, fmt.Errorf("%s has no readable config.json: %w", filepath.Base(dir), err)
	}
	d, err := gemma4.DescribeDir(dir)
	if err != nil {
		return nil, err
	}
	b, err := h.memory()
	if err != nil {
		return nil, err
	}
	return EstimateMemory(d, h.Backend, contextLen, b), nil
}

// FitRemote estimates a Hub model before download from its listing (the
// weight files' sizes) and its config.json.
func (h *Hub) FitRemote(ctx context.Context, repoID, rev string, contextLen int) (*Estimate, error) {
	if rev == "" {
		rev = "main"
	}
	l, err := h.FetchListing(ctx, repoID, rev)
	if err != nil {
		return nil, err
	}
	f, ok := l.File("config.json")
	if !ok {
		return nil, fmt.Errorf("%s has no config.json; it is not a model Perch can run", repoID)
	}
	if f.Size > 16<<20 {
		return nil, fmt.Errorf("%s: config.json is %s, too large", repoID, FormatBytes(f.Size))
	}
	resp, err := h.get(ctx, fmt.Sprintf("%s/%s/resolve/%s/config.json", h.Endpoint, l.Repo, l.Commit), 0)
	if err != nil {
		return nil, fmt.Errorf("%s: config.json: %w", repoID, err)
	}
	if resp.StatusCode != 200 {
		return nil, h.statusError(resp, repoID+": config.json")
	}
	defer resp.Body.Close()
	cfg, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return nil, fmt.Errorf("%s: config.json: %w", repoID, err)
	}
	d, err := gemma4.DescribeRemote(cfg, l.WeightBytes())
	if err != nil {
		return nil, fmt.Errorf("%s: config.json: %w", repoID, err)
	}
	b, err := h.memory()
	if err != nil {
		return nil, err
	}
	return EstimateMemory(d, h.Backend, contextLen, b), nil
}

// Fit estimates target: a local folder when one exists at that path, else
// a repo id with an optional @revision, from the cache or (when online)
// from the Hub without downloading weights. It also returns the label to show.
func (h *Hub) Fit(ctx context.Context, target string, contextLen int) (*Estimate, string, error) {
	if st, err := os.Stat(target); err == nil && st.IsDir() {
		e, err := h.FitDir(target, contextLen)
		return e, filepath.Base(filepath.Clean(target)), err
	}
	if LooksLikePath(target) {
		return nil, "", fmt.Errorf("%q: no such folder (a Hugging Face repo id is OWNER/NAME)", target)
	}
	repo, rev, err := ParseRef(target)
	if err != nil {
		return nil, "", fmt.Errorf("%q is neither a folder nor a repo id: %w", target, err)
	}
	if dir, err := h.Snapshot(repo.String(), rev); err == nil {
		e, err := h.FitDir(dir, contextLen)
		return e, repo.String(), err
	}
	e, err := h.FitRemote(ctx, repo.String(), rev, contextLen)
	return e, repo.String(), err
}

// LooksLikePath reports whether target, which is not an existing folder,
// was meant as one rather than as a repo id: it starts with "/", "." or
// "~", has a backslash, has other than exactly one "/", or its first part
// is a folder here ("models/gemma" when ./models exists).
func LooksLikePath(target string) bool {
	ref, _, _ := strings.Cut(target, "@") // a revision may have slashes (refs/pr/1)
	if strings.HasPrefix(ref, "/") || strings.HasPrefix(ref, ".") || strings.HasPrefix(ref, "~") ||
		strings.Contains(ref, "\\") || strings.Count(ref, "/") != 1 {
		return true
	}
	first, _, _ := strings.Cut(ref, "/")
	st, err := os.Stat(first)
	return err == nil && st.IsDir()
}
