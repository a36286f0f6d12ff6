package models

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2/widget"

	"perch/ui"
	"perch/ui/internal/fake"
)

func TestModelsViewShowsFitAndDownloads(t *testing.T) {
	h := fake.NewEnv(t)
	v := NewView(h.Env, h.Win)
	h.Show(v.Root)
	v.Reload()
	big := v.Rows["31b"]
	if !strings.Contains(big.Facts.Text, "18.0 GB on disk · needs 24.0 GB of memory · too big for this computer") ||
		big.Facts.Importance != widget.DangerImportance {
		t.Fatalf("31B facts = %q (%v)", big.Facts.Text, big.Facts.Importance)
	}
	small := v.Rows["e2b"]
	if len(small.badges.Objects) != 2 { // Recommended, In use
		t.Fatalf("e2b badges = %d", len(small.badges.Objects))
	}
	m := h.Catalog.List[1]
	m.Download = &ui.DownloadState{Done: 9 << 30, Total: 18 << 30, BytesPerSec: 50 << 20, ETA: 3 * time.Minute}
	h.Catalog.Update(m)
	h.Loop.Drain()
	if big.dlBox.Hidden || big.progress.Value != 0.5 || big.Buttons.Objects[0].(*widget.Button).Text != "Pause" {
		t.Fatalf("download row: hidden %v value %v", big.dlBox.Hidden, big.progress.Value)
	}
	m.Download.Paused = true
	h.Catalog.Update(m)
	h.Loop.Drain()
	if big.Buttons.Objects[0].(*widget.Button).Text != "Resume" || !strings.HasSuffix(big.rate.Text, "paused") {
		t.Fatalf("paused row: %q", big.rate.Text)
	}
	// A bad folder explains itself.
	v.useFolder(filepath.Join(t.TempDir(), "nothing-here"))
	h.Loop.Until(t, "folder error", func() bool { return v.Problem.Root.Visible() })
	if !strings.Contains(v.Problem.Summary.Text, "has no config.json") {
		t.Fatalf("folder error = %q", v.Problem.Summary.Text)
	}
}
