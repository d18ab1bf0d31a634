//go:build linux || darwin

package admission

import (
	"errors"

	"golang.org/x/sys/unix"
)

// osRefusal maps an operating system error on a fence or its directory to a
// typed refusal.
func osRefusal(path, what string, err error) error {
	switch {
	case errors.Is(err, unix.EACCES), errors.Is(err, unix.EPERM):
		return unavailable(CausePermissions, path, what, err)
	case errors.Is(err, unix.ENXIO), errors.Is(err, unix.ENODEV), errors.Is(err, unix.EOPNOTSUPP):
		return unavailable(CauseNotRegular, path, what, err)
	}
	return unavailable(CauseIO, path, what, err)
}

// openRefusal maps a failed open of the fence. The open names one entry of
// an open directory and never follows a link, so ELOOP (EMLINK on some
// systems) can only mean that the entry was a symbolic link when it was
// opened. openRefusal then returns CauseSymlink, whatever the entry has
// become since. EACCES on a fence that has no permission bits yet is a fence being
// created: it returns errUnsettled.
func openRefusal(dfd int, path string, err error) error {
	hook("open-failed", path)
	switch {
	case errors.Is(err, unix.ELOOP), errors.Is(err, unix.EMLINK):
		return unavailable(CauseSymlink, path, "a symbolic link", err)
	case errors.Is(err, unix.EACCES):
		var st unix.Stat_t
		if serr := unix.Fstatat(dfd, FenceFile, &st, unix.AT_SYMLINK_NOFOLLOW); serr == nil && uint32(st.Mode)&unix.S_IFMT == unix.S_IFREG && st.Mode&0o7777 == 0 {
			return errUnsettled
		}
	}
	return osRefusal(path, "open the fence", err)
}

// fileType names a file type for a refusal's detail.
func fileType(t uint32) string {
	switch t {
	case unix.S_IFDIR:
		return "a directory"
	case unix.S_IFIFO:
		return "a FIFO"
	case unix.S_IFLNK:
		return "a symbolic link"
	case unix.S_IFSOCK:
		return "a socket"
	case unix.S_IFCHR:
		return "a character device"
	case unix.S_IFBLK:
		return "a block device"
	}
	return "not a regular file"
}
