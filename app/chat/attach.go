package chat

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"perch/app/history"
	"perch/internal/contenthash"
	"perch/ui"
)

// Size limits per kind, checked before a file is read.
var maxBytes = map[ui.MediaKind]int64{
	ui.Image: 50 << 20,
	ui.Audio: 200 << 20,
	ui.Video: 1 << 30,
}

// maxAnyBytes bounds a read before the kind is known.
const maxAnyBytes = 1 << 30

// Probe identifies a media file from its bytes and describes it.
type Probe interface {
	// hash is data's content hash (contenthash.Of), made once by the caller.
	Probe(ctx context.Context, data []byte, hash string) (MediaInfo, error)
}

// MediaInfo is what a probe found.
type MediaInfo struct {
	Kind     ui.MediaKind
	MIME     string
	Duration time.Duration
	Width    int
	Height   int
	Thumb    []byte // small PNG, nil when none could be made
}

// AttachFile reads a dropped or chosen file, checks it, and stores it.
func (s *Service) AttachFile(path string) (ui.Attachment, error) {
	name := filepath.Base(path)
	fi, err := os.Stat(path)
	if err != nil {
		if os.IsNotExist(err) {
			return ui.Attachment{}, fmt.Errorf("%s is gone: it was moved or deleted", name)
		}
		if os.IsPermission(err) {
			return ui.Attachment{}, fmt.Errorf("Perch may not read %s: check its permissions", name)
		}
		return ui.Attachment{}, fmt.Errorf("%s: %w", name, err)
	}
	if fi.IsDir() {
		return ui.Attachment{}, fmt.Errorf("%s is a folder: drop the files inside it instead", name)
	}
	if !fi.Mode().IsRegular() {
		return ui.Attachment{}, fmt.Errorf("%s is not a regular file", name)
	}
	if fi.Size() > maxAnyBytes {
		return ui.Attachment{}, fmt.Errorf("%s is %s: Perch takes files up to %s", name, sizeText(fi.Size()), sizeText(maxAnyBytes))
	}
	f, err := os.Open(path)
	if err != nil {
		return ui.Attachment{}, fmt.Errorf("could not open %s: %w", name, err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxAnyBytes+1))
	if err != nil {
		return ui.Attachment{}, fmt.Errorf("could not read %s: %w", name, err)
	}
	return s.AttachData(name, data)
}

// AttachData checks bytes (a pasted image, a recorded clip) and stores them.
func (s *Service) AttachData(name string, data []byte) (ui.Attachment, error) {
	if len(data) == 0 {
		return ui.Attachment{}, fmt.Errorf("%s is empty", name)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	hash := contenthash.Of(data) // the one hash of this attachment: it travels with it from here
	info, err := s.probe.Probe(ctx, data, hash)
	if err != nil {
		return ui.Attachment{}, fmt.Errorf("%s: %s", name, strings.TrimPrefix(err.Error(), "sniff: "))
	}
	if limit := maxBytes[info.Kind]; int64(len(data)) > limit {
		return ui.Attachment{}, fmt.Errorf("%s is %s: Perch takes %s files up to %s", name, sizeText(int64(len(data))), info.Kind, sizeText(limit))
	}
	if err := canTake(s.models.State(), info.Kind, name); err != nil {
		return ui.Attachment{}, err
	}
	a, err := s.store.PutBlob(data, history.Attachment{SHA256: hash, Name: name, Kind: string(info.Kind), MIME: info.MIME,
		Duration: info.Duration, Width: info.Width, Height: info.Height, Thumb: info.Thumb})
	if err != nil {
		return ui.Attachment{}, err
	}
	s.attachments.Put(a.SHA256, data, int64(len(data))) // the send reads these bytes, not the disk's copy
	return attachmentToUI(a), nil
}

// canTake explains when the loaded model cannot take a kind of media.
func canTake(m ui.ModelState, k ui.MediaKind, name string) error {
	if m.ID == "" {
		return nil // checked again at send, once a model is chosen
	}
	ok := map[ui.MediaKind]bool{ui.Image: m.Vision, ui.Audio: m.Audio, ui.Video: m.Video}[k]
	if ok {
		return nil
	}
	verb := map[ui.MediaKind]string{ui.Image: "see images", ui.Audio: "hear audio", ui.Video: "watch video"}[k]
	alt := map[ui.MediaKind]string{
		ui.Image: "Choose a model that sees (any Gemma-4 vision model) in Models",
		ui.Audio: "Choose Gemma-4 E2B, E4B or 12B in Models to ask about sounds",
		ui.Video: "Choose a Gemma-4 model with vision in Models to ask about videos",
	}[k]
	return fmt.Errorf("%s can't %s, so %s was not attached. %s", m.Name, verb, name, alt)
}

func errNoModel(m ui.ModelState) error {
	if m.Err != "" {
		return fmt.Errorf("the model could not be loaded: %s", m.Err)
	}
	return fmt.Errorf("no model yet: open Models and download one (Gemma-4 E2B is small and quick)")
}

func sizeText(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.0f MB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%d KB", n>>10)
}
