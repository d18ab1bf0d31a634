package reportdir

import (
	"errors"

	"golang.org/x/sys/unix"
)

// exchange swaps directories a and b in one step (renameat2 with
// RENAME_EXCHANGE). It returns false when the filesystem cannot.
func exchange(a, b string) (bool, error) {
	err := unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE)
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EOPNOTSUPP) {
		return false, nil
	}
	return true, err
}

// alive reports whether process pid still runs.
func alive(pid int) bool {
	err := unix.Kill(pid, 0)
	return err == nil || errors.Is(err, unix.EPERM)
}
