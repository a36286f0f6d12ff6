package catalog

import (
	"path/filepath"
	"runtime"
	"testing"

	"perch/app/hub"
	"perch/ui"
)

// Too big is a property of the machine: a model that fits does not become
// "too big" because memory was busy when the list was drawn; busy memory
// only makes it tight.
func TestFitVerdictDoesNotFollowMomentaryFreeMemory(t *testing.T) {
	const gb = int64(1) << 30
	machine := hub.Budget{TotalRAM: 32 * gb, Usable: 30 * gb}
	if runtime.GOOS == "linux" {
		machine.Usable = 3 * gb // what MemAvailable said at start-up, on a busy machine
	}
	idle, busy := hub.Budget{TotalRAM: 32 * gb, Usable: 28 * gb}, hub.Budget{TotalRAM: 32 * gb, Usable: 2 * gb}
	for _, c := range []struct {
		need      int64
		now       hub.Budget
		want      ui.Fit
		situation string
	}{
		{8 * gb, idle, ui.FitsWell, "small, idle machine"},
		{8 * gb, busy, ui.FitsTight, "small, busy machine"},
		{16 * gb, busy, ui.FitsTight, "26B-sized, busy machine"},
		{40 * gb, idle, ui.TooBig, "bigger than the machine"},
	} {
		if runtime.GOOS != "linux" && c.need == 16*gb {
			continue
		}
		if got := fitOf(c.need, machine, c.now); got != c.want {
			t.Errorf("%s: %q, want %q", c.situation, got, c.want)
		}
	}
	if fitOf(0, machine, idle) != "" {
		t.Error("an unknown need got a verdict")
	}
}

func TestFolderModelsShowTheirSizes(t *testing.T) {
	dir, _ := filepath.Abs(filepath.Join("..", "..", "..", "testdata", "models", "text-tiny"))
	disk, ram := folderSizes(dir, hub.Budget{TotalRAM: 16 << 30, Usable: 8 << 30})
	if disk < 2<<20 || ram <= 0 {
		t.Fatalf("tiny folder: %d bytes on disk, %d of memory", disk, ram)
	}
	h := hub.New()
	h.Dir = t.TempDir()
	c := New(h)
	id, err := c.AddFolder(dir)
	if err != nil {
		t.Fatal(err)
	}
	models, _ := c.Models()
	for _, m := range models {
		if m.ID == id && (m.DiskBytes != disk || m.RAMBytes <= 0) {
			t.Fatalf("folder row %+v", m)
		}
	}
}
