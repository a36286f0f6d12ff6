package catalog

import (
	"os"
	"path/filepath"
	"runtime"

	"perch/app/hub"
	"perch/engine/gemma4"
	"perch/ui"
)

// fitOf judges a model's memory need against this machine. Too big is a
// matter of the machine (on Linux three quarters of its RAM; on a Mac the
// GPU's working set), never of what happens to be free this minute; what
// is free now can only make a fit tight ("close other apps").
func fitOf(need int64, b, now hub.Budget) ui.Fit {
	capacity := b.Usable
	if runtime.GOOS == "linux" && b.TotalRAM > 0 {
		capacity = b.TotalRAM / 4 * 3
	}
	switch {
	case need <= 0 || capacity <= 0:
		return ""
	case need > capacity:
		return ui.TooBig
	case float64(need) > 0.8*float64(capacity) || (now.Usable > 0 && need > now.Usable):
		return ui.FitsTight
	}
	return ui.FitsWell
}

// folderSizes are a model folder's bytes on disk (its files, links
// followed, as an HF snapshot's are) and the memory it needs.
func folderSizes(dir string, b hub.Budget) (disk, ram int64) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0, 0
	}
	for _, e := range entries {
		if st, err := os.Stat(filepath.Join(dir, e.Name())); err == nil && st.Mode().IsRegular() {
			disk += st.Size()
		}
	}
	if d, err := gemma4.DescribeDir(dir); err == nil {
		ram = hub.EstimateMemory(d, "", 0, b).Total
	}
	return disk, ram
}
