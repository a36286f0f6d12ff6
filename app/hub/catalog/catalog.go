package catalog

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"perch/app/chat"
	"perch/app/hub"
	"perch/app/problem"
	"perch/ui"
)

// Catalog adapts the model hub to the models view: the curated list with
// fit and cache state, downloads with progress, pause (keeps the partial
// file), cancel (drops it) and delete.
type Catalog struct {
	hub       *hub.Hub
	budget    hub.Budget
	budgetNow func() (hub.Budget, error) // memory free this minute (a fit is tight, never too big, by it)

	mu        sync.Mutex
	downloads map[string]*download // by repo
	folders   []string             // local folders the user added this session
	watchers  []func(ui.CatalogModel)
}

type download struct {
	cancel context.CancelFunc
	state  ui.DownloadState
	drop   bool // cancel, not pause: remove the partial files when it stops
	last   time.Time
}

// New is the catalog of h's cache, judged against this machine's memory.
func New(h *hub.Hub) *Catalog {
	b, err := hub.MachineBudget()
	if err != nil {
		b = hub.Budget{}
	}
	return &Catalog{hub: h, budget: b, budgetNow: hub.MachineBudget, downloads: map[string]*download{}}
}

var _ ui.Catalog = (*Catalog)(nil)

// Hub is the model cache the catalog lists.
func (c *Catalog) Hub() *hub.Hub { return c.hub }

// Models lists the curated models, then other Gemma-4 snapshots found in
// the cache, then folders added by hand.
func (c *Catalog) Models() ([]ui.CatalogModel, error) {
	cached := map[string]hub.CachedModel{}
	list, err := c.hub.List()
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("read the model cache %s: %w", c.hub.Dir, err)
	}
	for _, m := range list {
		if _, seen := cached[m.Repo]; !seen || m.Complete {
			cached[m.Repo] = m
		}
	}
	var out []ui.CatalogModel
	for _, e := range hub.Catalog() {
		m := ui.CatalogModel{ID: e.Repo, Name: e.Name, Blurb: capitalize(machineWords(e.Summary)), DiskBytes: e.DiskBytes,
			RAMBytes: e.RAMNeeded(0), Recommended: e.Default, Vision: e.Vision, Audio: e.Audio, Video: e.Video}
		if cm, ok := cached[e.Repo]; ok && cm.Complete {
			m.Downloaded = true
		}
		delete(cached, e.Repo)
		out = append(out, c.withState(m))
	}
	for repo, cm := range cached {
		if !cm.Complete || !cm.Info.Supported {
			continue
		}
		out = append(out, c.withState(ui.CatalogModel{ID: repo, Name: cm.Info.Family, Blurb: repo + " (in your Hugging Face cache)",
			DiskBytes: cm.Size, Downloaded: true, Vision: cm.Info.Vision, Audio: cm.Info.Audio, Video: cm.Info.Video}))
	}
	c.mu.Lock()
	folders := append([]string(nil), c.folders...)
	c.mu.Unlock()
	for _, dir := range folders {
		if loc, err := locateFolder(dir); err == nil {
			disk, ram := folderSizes(dir, c.budget)
			out = append(out, c.withState(ui.CatalogModel{ID: dir, Name: loc.Name, Blurb: dir, Downloaded: true,
				DiskBytes: disk, RAMBytes: ram, Vision: loc.Vision, Audio: loc.Audio, Video: loc.Video}))
		}
	}
	return out, nil
}

func (c *Catalog) withState(m ui.CatalogModel) ui.CatalogModel {
	now, _ := c.budgetNow()
	m.Fit = fitOf(m.RAMBytes, c.budget, now)
	m.Budget, _ = hub.Capacity(c.budget)
	c.mu.Lock()
	defer c.mu.Unlock()
	if d, ok := c.downloads[m.ID]; ok {
		s := d.state
		m.Download = &s
	}
	return m
}

// Download starts or resumes a pull in the background.
func (c *Catalog) Download(id string) error {
	if _, err := hub.ParseRepo(id); err != nil {
		return fmt.Errorf("%s is not a model Perch can download: %w", id, err)
	}
	c.mu.Lock()
	if d, ok := c.downloads[id]; ok && d.cancel != nil {
		c.mu.Unlock()
		return nil // already running
	}
	ctx, cancel := context.WithCancel(context.Background())
	d := &download{cancel: cancel}
	if old, ok := c.downloads[id]; ok {
		d.state = old.state
	}
	d.state.Paused, d.state.Err, d.state.ErrDetails = false, "", ""
	c.downloads[id] = d
	c.mu.Unlock()
	c.notify(id)
	go c.pull(ctx, id, d)
	return nil
}

func (c *Catalog) pull(ctx context.Context, id string, d *download) {
	_, err := c.hub.Pull(ctx, id, "main", func(p hub.Progress) {
		c.mu.Lock()
		d.state.Done, d.state.Total, d.state.BytesPerSec = p.BytesDone, p.BytesTotal, p.Rate
		d.state.ETA = max(p.ETA, 0)
		due := time.Since(d.last) > 250*time.Millisecond || p.Stage == hub.StageDone
		if due {
			d.last = time.Now()
		}
		c.mu.Unlock()
		if due {
			c.notify(id)
		}
	})
	c.mu.Lock()
	d.cancel = nil
	switch {
	case err == nil:
		delete(c.downloads, id)
	case d.drop:
		delete(c.downloads, id)
	case ctx.Err() != nil:
		d.state.Paused = true
	default:
		then := "press Try again" // the button's word (ui.resumeLabel): Resume once bytes arrived
		if d.state.Done > 0 {
			then = "press Resume"
		}
		p := problem.Explain(err, then)
		d.state.Err, d.state.ErrDetails = p.Summary, p.Details
	}
	drop := d.drop
	c.mu.Unlock()
	if drop {
		c.hub.Remove(id) // the partial files; the lock is released now
	}
	c.notify(id)
}

// Pause stops a download and keeps what arrived.
func (c *Catalog) Pause(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if d, ok := c.downloads[id]; ok && d.cancel != nil {
		d.cancel()
	}
}

// Cancel stops a download and removes its partial files.
func (c *Catalog) Cancel(id string) {
	c.mu.Lock()
	d, ok := c.downloads[id]
	if !ok {
		c.mu.Unlock()
		return
	}
	d.drop = true
	running := d.cancel != nil
	if running {
		d.cancel()
	} else {
		delete(c.downloads, id)
	}
	c.mu.Unlock()
	if !running {
		c.hub.Remove(id)
		c.notify(id)
	}
}

// Delete removes a downloaded model from the cache.
func (c *Catalog) Delete(id string) error {
	if filepath.IsAbs(id) {
		c.mu.Lock()
		for i, f := range c.folders {
			if f == id {
				c.folders = append(c.folders[:i], c.folders[i+1:]...)
				break
			}
		}
		c.mu.Unlock()
		return nil // a folder the user owns is only forgotten, never deleted
	}
	if err := c.hub.Remove(id); err != nil {
		return fmt.Errorf("could not delete %s: %w", id, err)
	}
	c.notify(id)
	return nil
}

// AddFolder checks a local model folder and remembers it.
func (c *Catalog) AddFolder(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	if _, err := locateFolder(abs); err != nil {
		return "", err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, f := range c.folders {
		if f == abs {
			return abs, nil
		}
	}
	c.folders = append(c.folders, abs)
	return abs, nil
}

// Watch implements ui.Catalog.
func (c *Catalog) Watch(fn func(ui.CatalogModel)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.watchers = append(c.watchers, fn)
}

func (c *Catalog) notify(id string) {
	models, err := c.Models()
	if err != nil {
		return
	}
	c.mu.Lock()
	ws := append([]func(ui.CatalogModel){}, c.watchers...)
	c.mu.Unlock()
	for _, m := range models {
		if m.ID == id {
			for _, w := range ws {
				w(m)
			}
		}
	}
}

// Locate resolves a model id (a catalog or cached repo, or a folder) to its
// folder, for the runtime.
func (c *Catalog) Locate(id string) (chat.Located, error) {
	if filepath.IsAbs(id) || isDir(id) {
		c.AddFolder(id)
		return locateFolder(id)
	}
	dir, err := c.hub.Snapshot(id, "main")
	if errors.Is(err, hub.ErrNotCached) {
		return chat.Located{}, fmt.Errorf("%s is not downloaded yet: download it in Models", id)
	}
	if err != nil {
		return chat.Located{}, err
	}
	loc, err := locateFolder(dir)
	if e, ok := hub.CatalogEntryFor(id); ok {
		loc.Name = e.Name
	}
	return loc, err
}

// locateFolder reads a model folder's config.json.
func locateFolder(dir string) (chat.Located, error) {
	data, err := os.ReadFile(filepath.Join(dir, "config.json"))
	if err != nil {
		return chat.Located{}, fmt.Errorf("%s has no config.json: choose the folder that holds the model's files", dir)
	}
	info, err := hub.DescribeConfig(data)
	if err != nil {
		return chat.Located{}, fmt.Errorf("%s: %w", dir, err)
	}
	if !info.Supported {
		return chat.Located{}, fmt.Errorf("%s holds a %q model; Perch runs Gemma-4", dir, info.ModelType)
	}
	name := info.Family
	if name == "Gemma-4" {
		name = "Gemma-4 (" + filepath.Base(dir) + ")"
	}
	return chat.Located{Dir: dir, Name: name, Vision: info.Vision, Audio: info.Audio, Video: info.Video}, nil
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// machineWords says "machine" for the catalog's "Mac" off macOS ("fine on
// an 8 GB Mac" reads wrong on Linux).
func machineWords(s string) string {
	if runtime.GOOS == "darwin" {
		return s
	}
	return strings.ReplaceAll(s, " Mac", " machine")
}
