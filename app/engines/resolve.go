package engines

import (
	"errors"
	"fmt"
	"os"

	"perch/app/hub"
)

// Resolve turns --model (a folder, or REPO[@REV] in the Hugging Face
// cache) into a model folder; empty means the default model when cached.
func Resolve(arg string) (string, error) {
	if arg == "" {
		if env := os.Getenv("PERCH_MODEL"); env != "" {
			arg = env
		} else {
			arg = hub.DefaultModel().Repo
		}
	}
	if st, err := os.Stat(arg); err == nil && st.IsDir() {
		return arg, nil
	}
	if hub.LooksLikePath(arg) {
		return "", fmt.Errorf("model %q: no such folder", arg)
	}
	repo, rev, err := hub.ParseRef(arg)
	if err != nil {
		return "", fmt.Errorf("model %q: %w", arg, err)
	}
	dir, err := hub.New().Snapshot(repo.String(), rev)
	if errors.Is(err, hub.ErrNotCached) {
		return "", fmt.Errorf("model %s is not downloaded: run 'perch models pull %s' or pass --model DIR", arg, arg)
	}
	return dir, err
}
