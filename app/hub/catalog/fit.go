package catalog

import (
	"os"
	"path/filepath"

	"perch/app/hub"
	"perch/engine/gemma4"
	"perch/ui"
)

// fitOf judges a model's memory need against this machine (hub.Judge,
// as Teach does).
func fitOf(need int64, b, now hub.Budget) ui.Fit {
	return map[hub.Room]ui.Fit{hub.Roomy: ui.FitsWell, hub.Tight: ui.FitsTight, hub.TooBig: ui.TooBig}[hub.Judge(need, b, now)]
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
