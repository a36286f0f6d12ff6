//go:build unix

package hub

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// fileLock is an flock(2) lock, the same kind Python's filelock takes on
// the HF cache's .locks files, so a pull here and one by huggingface_hub
// serialise. The kernel drops it when the process dies: no stale locks.
type fileLock struct{ f *os.File }

var errLocked = errors.New("locked by another process")

// tryLock takes the lock at path without waiting.
func tryLock(path string) (*fileLock, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, errLocked
		}
		return nil, fmt.Errorf("lock %s: %w", filepath.Base(path), err)
	}
	return &fileLock{f: f}, nil
}

// lock waits for the lock at path until ctx ends; waiting is called once
// if another holder makes us wait.
func lock(ctx context.Context, path string, waiting func()) (*fileLock, error) {
	for first := true; ; first = false {
		l, err := tryLock(path)
		if !errors.Is(err, errLocked) {
			return l, err
		}
		if first && waiting != nil {
			waiting()
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (l *fileLock) unlock() {
	syscall.Flock(int(l.f.Fd()), syscall.LOCK_UN)
	l.f.Close()
}
