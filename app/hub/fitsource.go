package hub

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"perch/engine/safetensors"
)

// towerPrefixes name the vision/audio encoder tensors.
var towerPrefixes = []string{"vision_tower.", "audio_tower.", "vision_embedder.", "embed_vision.", "embed_audio."}

func isTowerTensor(name string) bool {
	name = strings.TrimPrefix(name, "model.")
	for _, p := range towerPrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// LocalWeights sums tensor bytes from a checkpoint folder's safetensors
// headers (validated by engine/safetensors), split into text and towers.
func LocalWeights(dir string) (Weights, error) {
	files, err := weightFiles(dir)
	if err != nil {
		return Weights{}, err
	}
	var w Weights
	for _, name := range files {
		h, err := safetensors.ReadHeader(filepath.Join(dir, filepath.FromSlash(name)))
		if err != nil {
			return Weights{}, err
		}
		for _, t := range h.Tensors {
			if isTowerTensor(t.Name) {
				w.Towers += t.End - t.Begin
			} else {
				w.Text += t.End - t.Begin
			}
		}
	}
	return w, nil
}

// FitDir estimates a local checkpoint folder (a snapshot or any directory
// holding config.json and safetensors).
func (h *Hub) FitDir(dir string, contextLen int) (*Estimate, error) {
	cfg, err := os.ReadFile(filepath.Join(dir, "config.json"))
	if err != nil {
		return nil, fmt.Errorf("%s has no readable config.json: %w", filepath.Base(dir), err)
	}
	w, err := LocalWeights(dir)
	if err != nil {
		return nil, err
	}
	b, err := h.memory()
	if err != nil {
		return nil, err
	}
	return EstimateMemory(cfg, w, contextLen, b)
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
	var w Weights
	for _, f := range l.Files {
		if strings.HasSuffix(f.Path, ".safetensors") {
			w.Text += f.Size
		}
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
	b, err := h.memory()
	if err != nil {
		return nil, err
	}
	return EstimateMemory(cfg, w, contextLen, b)
}

// Fit estimates target: a local folder when one exists at that path, else
// a repo id with an optional @revision, from the cache or (when online)
// from the Hub without downloading weights. It also returns the label to show.
func (h *Hub) Fit(ctx context.Context, target string, contextLen int) (*Estimate, string, error) {
	if st, err := os.Stat(target); err == nil && st.IsDir() {
		e, err := h.FitDir(target, contextLen)
		return e, filepath.Base(filepath.Clean(target)), err
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
