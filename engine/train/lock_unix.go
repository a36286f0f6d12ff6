//go:build unix

package train

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
)

// lockStream marks f (the open metrics stream) as written by a live run:
// an exclusive flock, which the kernel drops when the process ends however
// it ends, so a reader can tell a run that is going from one that died.
func lockStream(f *os.File) error {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return errors.New("another run is writing into this folder: wait for it, stop it, or give another --adapter-path")
	}
	return err
}

// RunLive reports whether a run is writing dir's metrics stream now.
func RunLive(dir string) (bool, error) {
	f, err := os.Open(filepath.Join(dir, StreamFile))
	if err != nil {
		return false, err
	}
	defer f.Close()
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	return false, nil
}
