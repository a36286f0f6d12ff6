package library

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"perch/app/history"
	"perch/engine/lora"
	"perch/engine/regfile"
	"perch/engine/train"
	"perch/internal/durable"
	"perch/ui"
)

// Options are what the library needs from the app.
type Options struct {
	Store *history.Store
	// Dir holds adapters/<id>/.
	Dir string
	// Bases lists the models adapters can be for; Locate finds one's
	// folder and name. ImportAdapter matches a config's "model" with them.
	Bases  func() ([]ui.TeachBase, error)
	Locate func(id string) (dir, name string, err error)
	// Busy reports whether a run is training into the adapter (it is not
	// deleted then).
	Busy func(adapterID string) bool
}

// Library is the adapters the user owns: each one's files in
// Dir/adapters/<id>/ (mlx-lm's two files, and best/ when the run's best
// checkpoint is not its final adapter), its facts in the history
// database. It implements ui.Adapters.
type Library struct{ o Options }

var _ ui.Adapters = (*Library)(nil)

// New returns the library o describes.
func New(o Options) *Library {
	if o.Bases == nil {
		o.Bases = func() ([]ui.TeachBase, error) { return nil, nil }
	}
	if o.Locate == nil {
		o.Locate = func(id string) (string, string, error) { return "", id, nil }
	}
	if o.Busy == nil {
		o.Busy = func(string) bool { return false }
	}
	return &Library{o: o}
}

// Adapters implements ui.Adapters.
func (l *Library) Adapters() ([]ui.AdapterInfo, error) {
	as, err := l.o.Store.Adapters()
	if err != nil {
		return nil, err
	}
	out := make([]ui.AdapterInfo, len(as))
	for i, a := range as {
		out[i] = ui.AdapterInfo{ID: a.ID, Name: a.Name, Base: a.Base, BaseName: a.BaseName, Method: ui.TrainMethod(a.Method),
			Created: a.Created, Steps: a.Steps, BestVal: a.BestVal, BestStep: a.BestStep, Size: dirSize(a.Dir), Rank: a.Rank}
	}
	return out, nil
}

// AdapterDir is where adapter id's files are ("" when unknown).
func (l *Library) AdapterDir(id string) string {
	a, err := l.o.Store.AdapterByID(id)
	if err != nil {
		return ""
	}
	return a.Dir
}

func dirSize(dir string) int64 {
	var n int64
	for _, d := range []string{dir, filepath.Join(dir, bestDir)} {
		for _, f := range []string{lora.WeightsFile, lora.ConfigFile} {
			if st, err := os.Stat(filepath.Join(d, f)); err == nil {
				n += st.Size()
			}
		}
	}
	return n
}

// CheckName refuses names the library and the local API cannot use.
func CheckName(name string) error {
	switch {
	case strings.TrimSpace(name) == "":
		return errors.New("give the adapter a name")
	case strings.Contains(name, "+"):
		return errors.New("an adapter's name cannot contain \"+\" (the local API writes models as base+adapter)")
	case utf8.RuneCountInString(name) > 64 || strings.ContainsAny(name, "/\\\x00\n"):
		return errors.New("an adapter's name is up to 64 characters, without slashes")
	}
	return nil
}

// UniqueName is name, or name-2, name-3… when another adapter of base has it.
func (l *Library) UniqueName(name, base, except string) (string, error) {
	as, err := l.o.Store.Adapters()
	if err != nil {
		return "", err
	}
	taken := map[string]bool{}
	for _, a := range as {
		if a.Base == base && a.ID != except {
			taken[strings.ToLower(a.Name)] = true
		}
	}
	out := name
	for i := 2; taken[strings.ToLower(out)]; i++ {
		out = fmt.Sprintf("%s-%d", name, i)
	}
	return out, nil
}

// RenameAdapter implements ui.Adapters.
func (l *Library) RenameAdapter(id, name string) error {
	name = strings.TrimSpace(name)
	if err := CheckName(name); err != nil {
		return err
	}
	a, err := l.o.Store.AdapterByID(id)
	if err != nil {
		return err
	}
	if u, err := l.UniqueName(name, a.Base, id); err != nil {
		return err
	} else if u != name {
		return fmt.Errorf("another adapter for %s is called %s", a.BaseName, name)
	}
	return l.o.Store.RenameAdapter(id, name)
}

// DeleteAdapter implements ui.Adapters.
func (l *Library) DeleteAdapter(id string) error {
	a, err := l.o.Store.AdapterByID(id)
	if err != nil {
		return err
	}
	if l.o.Busy(id) {
		return errors.New("a run is training this adapter: stop it first")
	}
	if err := l.o.Store.DeleteAdapter(id); err != nil {
		return err
	}
	return l.removeAll(a.Dir)
}

// ExportAdapter implements ui.Adapters: an mlx-lm adapter folder named
// after the adapter, inside dir, with the run's best checkpoint (the final
// adapter when that is the best, or nothing was validated).
func (l *Library) ExportAdapter(id, dir string) (string, error) {
	a, err := l.o.Store.AdapterByID(id)
	if err != nil {
		return "", err
	}
	out := filepath.Join(dir, a.Name)
	for i := 2; ; i++ {
		if _, err := os.Stat(out); errors.Is(err, os.ErrNotExist) {
			break
		}
		out = filepath.Join(dir, fmt.Sprintf("%s-%d", a.Name, i))
	}
	if err := copyAdapter(exportSource(a), out); err != nil {
		return "", err
	}
	return out, nil
}

// ImportAdapter implements ui.Adapters: the folder is checked as the
// engine will load it, then copied into the library.
func (l *Library) ImportAdapter(dir string) (ui.AdapterInfo, error) {
	ad, err := lora.Load(dir)
	if err != nil {
		return ui.AdapterInfo{}, fmt.Errorf("not an adapter Perch can use: %w", err)
	}
	base, baseName := l.baseOf(ad.Config)
	if base == "" {
		return ui.AdapterInfo{}, errors.New("its adapter_config.json names no model Perch has (\"model\"): download the model it was trained for first")
	}
	name := strings.TrimSpace(filepath.Base(filepath.Clean(dir)))
	name = strings.NewReplacer("+", "-").Replace(name)
	if CheckName(name) != nil {
		name = "imported"
	}
	if name, err = l.UniqueName(name, base, ""); err != nil {
		return ui.AdapterInfo{}, err
	}
	rec := history.Adapter{ID: newAdapterID(), Name: name, Base: base, BaseName: baseName, Rank: ad.Config.LoRA.Rank, BestVal: math.NaN()}
	rec.Dir = filepath.Join(l.o.Dir, "adapters", rec.ID)
	if err := copyAdapter(dir, rec.Dir); err != nil {
		return ui.AdapterInfo{}, err
	}
	if err := l.o.Store.PutAdapter(&rec); err != nil {
		l.removeAll(rec.Dir)
		return ui.AdapterInfo{}, err
	}
	return ui.AdapterInfo{ID: rec.ID, Name: rec.Name, Base: base, BaseName: baseName, Created: rec.Created,
		BestVal: math.NaN(), Size: dirSize(rec.Dir), Rank: rec.Rank}, nil
}

// baseOf matches the "model" an mlx-lm config names with a model here:
// its id, its folder, or the last part of either.
func (l *Library) baseOf(cfg lora.Config) (id, name string) {
	var model string
	json.Unmarshal(cfg.Extra["model"], &model)
	if model == "" {
		return "", ""
	}
	bases, _ := l.o.Bases()
	last := func(p string) string { return strings.ToLower(filepath.Base(strings.TrimRight(p, "/"))) }
	for _, b := range bases {
		dir, _, _ := l.o.Locate(b.ID)
		if b.ID == model || (dir != "" && dir == model) || last(b.ID) == last(model) {
			return b.ID, b.Name
		}
	}
	return "", ""
}

func newAdapterID() string {
	return fmt.Sprintf("ad-%s", time.Now().UTC().Format("20060102-150405.000000"))
}

// Keep puts a finished run's adapter (the folder from) into the library
// (replacing the run's earlier one when it was resumed) and records it,
// with best, the run's best saved state as the engine reported it (Step
// from the run's start; nil when nothing saved was validated). The
// adapter's files are linked, not read: the chat that switches it on is
// the one read after training.
func (l *Library) Keep(run history.TrainRun, rank int, from string, best *train.Checkpoint) (string, error) {
	rec := history.Adapter{ID: run.AdapterID, Base: run.Base, BaseName: run.BaseName, Method: run.Method,
		Rank: rank, Steps: run.Step, BestVal: math.NaN(), RunID: run.ID}
	var err error
	if rec.ID == "" {
		rec.ID = newAdapterID()
		if rec.Name, err = l.UniqueName(run.Name, run.Base, ""); err != nil {
			return "", err
		}
	} else if old, err := l.o.Store.AdapterByID(rec.ID); err == nil {
		rec.Name, rec.Created = old.Name, old.Created
	} else {
		rec.Name = run.Name
	}
	rec.Dir = filepath.Join(l.o.Dir, "adapters", rec.ID)
	if err := linkAdapter(from, rec.Dir); err != nil {
		return "", err
	}
	if err := keepBest(best, from, &rec); err != nil {
		return "", err
	}
	return rec.ID, l.o.Store.PutAdapter(&rec)
}

// linkAdapter is copyAdapter by hard links where the file system allows
// them (the run's folder and the library are side by side): no byte is
// read. A run folder never rewrites a file in place (saves are renamed in),
// so the library's links keep the adapter as it was kept.
func linkAdapter(src, dst string) error {
	return placeAdapter(src, dst, func(from, to string) error {
		if os.Link(from, to) == nil {
			return nil
		}
		return copyFile(from, to)
	})
}

// copyAdapter copies mlx-lm's two files from src into dst.
func copyAdapter(src, dst string) error { return placeAdapter(src, dst, copyFile) }

// placeAdapter puts mlx-lm's two files of src into dst with place, through
// a temporary folder renamed into place, so dst is whole or as it was.
func placeAdapter(src, dst string, place func(from, to string) error) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dst), ".tmp-"+filepath.Base(dst)+"-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	for _, f := range []string{lora.WeightsFile, lora.ConfigFile} {
		if err := place(filepath.Join(src, f), filepath.Join(tmp, f)); err != nil {
			return fmt.Errorf("keep the adapter: %w", err)
		}
	}
	return durable.ReplaceDir(tmp, dst)
}

func copyFile(src, dst string) error {
	in, err := regfile.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// removeAll deletes a folder Perch made, refusing anything outside Dir.
func (l *Library) removeAll(dir string) error {
	rel, err := filepath.Rel(l.o.Dir, dir)
	if err != nil || rel == "." || rel == ".." || filepath.IsAbs(rel) || len(rel) > 1 && rel[:2] == ".." {
		return fmt.Errorf("teach: %s is not inside %s", dir, l.o.Dir)
	}
	return os.RemoveAll(dir)
}
