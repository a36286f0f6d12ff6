package catalog

import (
	"path/filepath"
	"strings"
	"testing"

	"perch/app/hub"
	"perch/ui"
)

func TestCatalogListsCuratedModelsAndFolders(t *testing.T) {
	h := hub.New()
	h.Dir = t.TempDir() // an empty cache
	c := New(h)
	models, err := c.Models()
	if err != nil {
		t.Fatal(err)
	}
	if len(models) != len(hub.Catalog()) {
		t.Fatalf("%d models, want the %d curated ones", len(models), len(hub.Catalog()))
	}
	var rec ui.CatalogModel
	for _, m := range models {
		if m.Downloaded {
			t.Errorf("%s downloaded in an empty cache", m.Name)
		}
		if m.Recommended {
			rec = m
		}
		if m.RAMBytes <= 0 || m.DiskBytes <= 0 {
			t.Errorf("%s: disk %d, RAM %d", m.Name, m.DiskBytes, m.RAMBytes)
		}
	}
	if rec.ID != hub.DefaultModel().Repo || !rec.Audio || !rec.Vision {
		t.Fatalf("recommended = %+v", rec)
	}
	// A local folder with a Gemma-4 config becomes a model of its own.
	dir, _ := filepath.Abs(filepath.Join("..", "..", "..", "testdata", "models", "text-tiny"))
	id, err := c.AddFolder(dir)
	if err != nil {
		t.Fatal(err)
	}
	loc, err := c.Locate(id)
	if err != nil || loc.Dir != dir || !loc.Vision || !loc.Audio {
		t.Fatalf("locate(%s) = %+v, %v", id, loc, err)
	}
	models, _ = c.Models()
	if last := models[len(models)-1]; last.ID != dir || !last.Downloaded {
		t.Fatalf("folder row = %+v", last)
	}
	// A folder without a model is refused with what to do.
	if _, err := c.AddFolder(t.TempDir()); err == nil || !strings.Contains(err.Error(), "has no config.json") {
		t.Fatalf("empty folder: %v", err)
	}
	// A curated model not in the cache says how to get it.
	if _, err := c.Locate(hub.DefaultModel().Repo); err == nil || !strings.Contains(err.Error(), "download it in Models") {
		t.Fatalf("uncached model: %v", err)
	}
}
