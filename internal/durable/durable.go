// Package durable writes files and folders so that a crash or power cut
// leaves either the old version or the new one, never a part: the new
// bytes go to a temporary beside the target, are synced (F_FULLFSYNC on
// macOS), renamed over it, and the folder is synced so the rename itself
// survives. Temporaries are named ".NAME-*.tmp", so a folder's owner can
// sweep what an interrupted write left.
package durable

import (
	"errors"
	"os"
	"path/filepath"
)

// WriteFile writes data to path; the folder is made (dirPerm) if missing.
func WriteFile(path string, data []byte, dirPerm os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), dirPerm); err != nil {
		return err
	}
	return Fill(path, func(tmp string) error { return os.WriteFile(tmp, data, 0o644) })
}

// Fill is WriteFile for a writer that wants a file name (a safetensors
// writer): fill writes the temporary tmp, which then takes path's place.
func Fill(path string, fill func(tmp string) error) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+"-*.tmp")
	if err != nil {
		return err
	}
	tmp := f.Name()
	f.Close()
	if err := fill(tmp); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := syncFile(tmp); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return SyncDir(filepath.Dir(path))
}

// ReplaceDir puts the finished folder tmp (beside dst, its files synced)
// in dst's place: an old dst is set aside first and removed after, or put
// back when the rename fails. The parent folder is synced.
func ReplaceDir(tmp, dst string) error {
	if err := SyncDir(tmp); err != nil {
		return err
	}
	old := tmp + ".old"
	os.RemoveAll(old)
	if _, err := os.Lstat(dst); err == nil {
		if err := os.Rename(dst, old); err != nil {
			return err
		}
	}
	if err := os.Rename(tmp, dst); err != nil {
		os.Rename(old, dst)
		return err
	}
	os.RemoveAll(old)
	return SyncDir(filepath.Dir(dst))
}

// SyncDir makes a folder's entries (its renames) durable; a file system
// that cannot sync folders is not an error.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) {
		return err
	}
	return nil
}

func syncFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
