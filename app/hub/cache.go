package hub

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"perch/engine/gemma4"
)

// CachedModel is one snapshot in the cache.
type CachedModel struct {
	Repo     string   // "mlx-community/gemma-4-e2b-it-4bit"
	Refs     []string // branch/tag names pointing at Commit ("main")
	Commit   string
	Dir      string // the snapshot folder, ready for engine.Open
	Size     int64  // bytes of the files in the snapshot
	Modified time.Time
	Complete bool   // config and every weight shard present
	Problem  string // why not complete
	Info     ModelInfo
}

// Revision is the ref to show: the first ref name, else the short commit.
func (m CachedModel) Revision() string {
	if len(m.Refs) > 0 {
		return m.Refs[0]
	}
	return m.Commit[:min(12, len(m.Commit))]
}

// ModelInfo is what a config.json says about a checkpoint.
type ModelInfo struct {
	ModelType string // "gemma4", "gemma4_unified", ...
	Family    string // "Gemma-4 E2B", or the model type for others
	Supported bool   // a Gemma-4 family Perch runs
	Vision    bool
	Audio     bool
	Video     bool // frames through the vision path
}

// Modalities is "text", "text+image+audio+video", ...
func (i ModelInfo) Modalities() string {
	s := "text"
	if i.Vision {
		s += "+image"
	}
	if i.Audio {
		s += "+audio"
	}
	if i.Video {
		s += "+video"
	}
	return s
}

// DescribeConfig reads the family and modalities from config.json bytes,
// with gemma4's parser (the one the engine loads with). A Gemma-4 config
// the engine would refuse is an error; another model type is described as
// unsupported.
func DescribeConfig(data []byte) (ModelInfo, error) {
	var head struct {
		ModelType string `json:"model_type"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return ModelInfo{}, fmt.Errorf("config.json: %v", err)
	}
	info := ModelInfo{ModelType: head.ModelType, Family: head.ModelType}
	switch head.ModelType {
	case "gemma4", "gemma4_unified", "gemma4_text":
	default:
		return info, nil
	}
	cfg, err := gemma4.ParseConfig(data)
	if err != nil {
		return info, fmt.Errorf("config.json: %w", err)
	}
	d := gemma4.Describe(cfg, gemma4.Weights{})
	info.Supported, info.Family = true, d.Name()
	info.Vision, info.Audio, info.Video = d.Vision(), d.Audio(), d.Video()
	return info, nil
}

// Snapshot returns the cached snapshot folder for repo at rev (a branch,
// tag or commit) without touching the network, and an error saying what is
// missing when it is absent or incomplete.
func (h *Hub) Snapshot(repoID, rev string) (string, error) {
	repo, err := ParseRepo(repoID)
	if err != nil {
		return "", err
	}
	if err := CheckRevision(rev); err != nil {
		return "", err
	}
	commit, err := h.resolveRef(repo, rev)
	if err != nil {
		return "", err
	}
	dir := h.snapshotDir(repo, commit)
	if err := checkSnapshot(dir); err != nil {
		return "", fmt.Errorf("%s@%s: %w", repo, rev, err)
	}
	return dir, nil
}

// resolveRef maps a revision to a cached commit.
func (h *Hub) resolveRef(repo Repo, rev string) (string, error) {
	if isHex(rev, 40) {
		if _, err := os.Stat(h.snapshotDir(repo, rev)); err == nil {
			return rev, nil
		}
	}
	b, err := os.ReadFile(h.refPath(repo, rev))
	if err != nil {
		return "", fmt.Errorf("%s@%s: %w", repo, rev, ErrNotCached)
	}
	commit := strings.TrimSpace(string(b))
	if !isHex(commit, 40) {
		return "", fmt.Errorf("%s: refs/%s holds %q, not a commit", repo, rev, truncate(commit, 50))
	}
	return commit, nil
}

// checkSnapshot says whether a snapshot folder holds a loadable
// checkpoint: config.json and every weight shard, each link resolving.
func checkSnapshot(dir string) error {
	if _, err := os.Stat(filepath.Join(dir, "config.json")); err != nil {
		return fmt.Errorf("%w: config.json missing", ErrNotCached)
	}
	shards, err := weightFiles(dir)
	if err != nil {
		return err
	}
	for _, s := range shards {
		if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(s))); err != nil {
			return fmt.Errorf("%w: weight file %s missing", ErrNotCached, s)
		}
	}
	return nil
}

// weightFiles lists a checkpoint's safetensors files: the index's shards,
// else the *.safetensors files in dir.
func weightFiles(dir string) ([]string, error) {
	if b, err := os.ReadFile(filepath.Join(dir, "model.safetensors.index.json")); err == nil {
		idx, err := ParseShardIndex(b)
		if err != nil {
			return nil, err
		}
		return idx.Shards(), nil
	}
	matches, _ := filepath.Glob(filepath.Join(dir, "*.safetensors"))
	if len(matches) == 0 {
		return nil, fmt.Errorf("%w: no .safetensors weights", ErrNotCached)
	}
	var names []string
	for _, m := range matches {
		names = append(names, filepath.Base(m))
	}
	return names, nil
}

// List returns every model snapshot in the cache, newest first. Folders
// that are not model repos, and broken entries, are skipped.
func (h *Hub) List() ([]CachedModel, error) {
	entries, err := os.ReadDir(h.Dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []CachedModel
	for _, e := range entries {
		repo, ok := repoFromCacheDir(e.Name())
		if !ok || !e.IsDir() {
			continue
		}
		out = append(out, h.listRepo(repo)...)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Modified.After(out[j].Modified) })
	return out, nil
}

func (h *Hub) listRepo(repo Repo) []CachedModel {
	refs := map[string][]string{} // commit → ref names
	refRoot := filepath.Join(h.repoDir(repo), "refs")
	filepath.WalkDir(refRoot, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		b, err := os.ReadFile(p)
		if c := strings.TrimSpace(string(b)); err == nil && isHex(c, 40) {
			name, _ := filepath.Rel(refRoot, p)
			refs[c] = append(refs[c], filepath.ToSlash(name))
		}
		return nil
	})
	snaps, _ := os.ReadDir(filepath.Join(h.repoDir(repo), "snapshots"))
	var out []CachedModel
	for _, s := range snaps {
		if !s.IsDir() || !isHex(s.Name(), 40) {
			continue
		}
		dir := h.snapshotDir(repo, s.Name())
		m := CachedModel{Repo: repo.String(), Commit: s.Name(), Dir: dir, Refs: refs[s.Name()]}
		sort.Slice(m.Refs, func(i, j int) bool {
			if (m.Refs[i] == "main") != (m.Refs[j] == "main") {
				return m.Refs[i] == "main"
			}
			return m.Refs[i] < m.Refs[j]
		})
		m.Size, m.Modified = snapshotSize(dir)
		if err := checkSnapshot(dir); err != nil {
			m.Problem = err.Error()
		} else {
			m.Complete = true
		}
		if b, err := os.ReadFile(filepath.Join(dir, "config.json")); err == nil && len(b) < 16<<20 {
			var err error
			if m.Info, err = DescribeConfig(b); err != nil && m.Problem == "" {
				m.Problem = err.Error()
			}
		}
		out = append(out, m)
	}
	return out
}

// snapshotSize sums the sizes of the files a snapshot links to, counting
// each blob once, and returns the newest modification time.
func snapshotSize(dir string) (int64, time.Time) {
	var size int64
	var newest time.Time
	seen := map[string]bool{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		st, err := os.Stat(p) // follows the link to the blob
		if err != nil {
			return nil
		}
		if target, err := os.Readlink(p); err == nil {
			if seen[target] {
				return nil
			}
			seen[target] = true
		}
		size += st.Size()
		if st.ModTime().After(newest) {
			newest = st.ModTime()
		}
		return nil
	})
	return size, newest
}

// Remove deletes a repo's folder from the cache (every revision and blob).
// It refuses while a pull of the same repo holds the lock.
func (h *Hub) Remove(repoID string) error {
	repo, err := ParseRepo(repoID)
	if err != nil {
		return err
	}
	dir := h.repoDir(repo)
	if _, err := os.Lstat(dir); err != nil {
		return fmt.Errorf("%s: %w", repo, ErrNotCached)
	}
	l, err := tryLock(filepath.Join(h.lockDir(repo), repoLockName))
	if errors.Is(err, errLocked) {
		return fmt.Errorf("%s: %w; cancel it first", repo, ErrInProgress)
	}
	if err != nil {
		return err
	}
	defer l.unlock()
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("remove %s: %w", repo, err)
	}
	return nil
}

func sortedKeys(set map[string]bool) []string {
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
