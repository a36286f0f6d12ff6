//go:build unix

package hub

import (
	"errors"
	"syscall"
)

// diskFree is the space an unprivileged user may still write under dir.
func diskFree(dir string) (int64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, err
	}
	return int64(st.Bavail) * int64(st.Bsize), nil
}

// isDiskFull reports a write that failed for lack of space or a file-size
// limit (ulimit -f makes write return EFBIG; Go ignores SIGXFSZ).
func isDiskFull(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EFBIG) || errors.Is(err, syscall.EDQUOT)
}
