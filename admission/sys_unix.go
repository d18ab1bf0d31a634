//go:build linux || darwin

package admission

import (
	"errors"
	"fmt"
	"time"

	"golang.org/x/sys/unix"
)

// fenceMode is every fence file's mode: "mode exactly 0640 whatever the umask".
const fenceMode = 0o640

// maxBackoff caps the pause between two polls of a held fence.
const maxBackoff = 50 * time.Millisecond

// tryReopens bounds how often a try follows a fence that was replaced
// under it (a delete or prune at work) before it answers in progress.
const tryReopens = 3

// createRaces bounds how often a guard finds a fence gone, then there
// again when it creates one, before it answers in progress.
const createRaces = 16

// StatFilesystem applies the predicate to dir: statfs(2), then the table of
// filesystems whose flock is native.
func StatFilesystem(dir string) (Filesystem, error) {
	var st unix.Statfs_t
	if err := retry(func() error { return unix.Statfs(dir, &st) }); err != nil {
		return Filesystem{}, err
	}
	return classify(&st), nil
}

func fsOfFd(fd int) (Filesystem, error) {
	var st unix.Statfs_t
	if err := retry(func() error { return unix.Fstatfs(fd, &st) }); err != nil {
		return Filesystem{}, err
	}
	return classify(&st), nil
}

// retry runs a system call again while it answers EINTR.
func retry(call func() error) error {
	for {
		if err := call(); !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}

// takeFence takes one fence: it decides on the directory's filesystem,
// opens (a guard: creates) the file without following a link, checks it,
// locks it, and checks that the path still names what it locked.
func takeFence(in Install, f Fence, exclusive bool, deadline time.Time, wait bool) (entry, error) {
	path := f.Path()
	var dfd int
	err := retry(func() (err error) {
		dfd, err = unix.Open(f.dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		return err
	})
	if err != nil {
		if !exclusive && errors.Is(err, unix.ENOENT) {
			return skip(f)
		}
		return entry{}, osRefusal(path, "open the directory", err)
	}
	defer closeUnlocked(dfd)
	fs, err := fsOfFd(dfd)
	if err != nil {
		return entry{}, unavailable(CauseIO, path, "statfs the directory", err)
	}
	if !fs.HostsFences {
		if in.Composed {
			return entry{}, unavailable(CauseComposed, path, fs.String(), nil)
		}
		return skip(f)
	}
	waiting := in.Waiting
	for reopen := 0; ; reopen++ {
		fd, err := openFence(dfd, path, exclusive)
		if !exclusive && errors.Is(err, unix.ENOENT) {
			return skip(f)
		}
		if err != nil {
			return entry{}, err
		}
		st, err := checkFence(fd, path)
		if err == nil {
			err = lockFd(fd, path, exclusive, deadline, wait, func() {
				if waiting != nil {
					waiting(f)
					waiting = nil
				}
			})
		}
		if err != nil {
			closeUnlocked(fd)
			return entry{}, err
		}
		var cur unix.Stat_t
		err = unix.Fstatat(dfd, FenceFile, &cur, unix.AT_SYMLINK_NOFOLLOW)
		if err == nil && cur.Dev == st.Dev && cur.Ino == st.Ino && cur.Nlink == 1 {
			return entry{fence: f, fd: fd, dev: uint64(st.Dev), ino: st.Ino}, nil
		}
		// The fence was removed or replaced while we waited for it.
		if err := unlockClose(fd); err != nil {
			return entry{}, unavailable(CauseIO, path, "let go of a replaced fence", err)
		}
		if !wait && reopen >= tryReopens || wait && !time.Now().Before(deadline) {
			return entry{}, &InProgressError{Path: path}
		}
	}
}

// openFence opens the fence file in the directory dfd without following a
// link, close-on-exec and without blocking (a FIFO would block). A guard
// creates it exclusively when it does not exist, then gives it mode 0640 and
// the directory's group.
func openFence(dfd int, path string, create bool) (int, error) {
	const flags = unix.O_RDONLY | unix.O_NOFOLLOW | unix.O_CLOEXEC | unix.O_NONBLOCK | unix.O_NOCTTY
	for race := 0; ; race++ {
		if race == createRaces {
			// Created and removed under us again and again: a delete or
			// prune is at work.
			return -1, &InProgressError{Path: path}
		}
		var fd int
		err := retry(func() (err error) { fd, err = unix.Openat(dfd, FenceFile, flags, 0); return err })
		if err == nil {
			return fd, nil
		}
		if errors.Is(err, unix.ENOENT) && !create {
			return -1, err // a hold skips a fence that does not exist
		}
		if !errors.Is(err, unix.ENOENT) {
			return -1, openRefusal(dfd, path, err)
		}
		err = retry(func() (err error) {
			fd, err = unix.Openat(dfd, FenceFile, flags|unix.O_CREAT|unix.O_EXCL, fenceMode)
			return err
		})
		if errors.Is(err, unix.EEXIST) {
			continue // another participant created it first: open theirs
		}
		if err != nil {
			return -1, openRefusal(dfd, path, err)
		}
		if err := settle(dfd, fd, path); err != nil {
			closeUnlocked(fd)
			return -1, err
		}
		return fd, nil
	}
}

// settle gives a fence its creator just made the directory's group (unless
// a setgid directory already gave it) and mode exactly 0640. A creator that
// cannot refuses with CausePermissions; the file stays, since another
// participant may have opened it already, until its owner corrects it.
func settle(dfd, fd int, path string) error {
	var dir, file unix.Stat_t
	if err := unix.Fstat(dfd, &dir); err != nil {
		return unavailable(CauseIO, path, "stat the directory", err)
	}
	if err := unix.Fstat(fd, &file); err != nil {
		return unavailable(CauseIO, path, "stat the new fence", err)
	}
	if file.Gid != dir.Gid {
		if err := unix.Fchown(fd, -1, int(dir.Gid)); err != nil {
			return unavailable(CausePermissions, path, fmt.Sprintf("give the new fence the directory's group %d", dir.Gid), err)
		}
	}
	if err := unix.Fchmod(fd, fenceMode); err != nil {
		return unavailable(CausePermissions, path, "give the new fence mode 0640", err)
	}
	return nil
}

// checkFence answers the fence's stat when it is a regular file with one
// link on a filesystem that hosts fences.
func checkFence(fd int, path string) (unix.Stat_t, error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return st, unavailable(CauseIO, path, "stat the fence", err)
	}
	if t := uint32(st.Mode) & unix.S_IFMT; t != unix.S_IFREG {
		return st, unavailable(CauseNotRegular, path, fileType(t), nil)
	}
	if st.Nlink != 1 {
		return st, unavailable(CauseLinks, path, fmt.Sprintf("%d links", st.Nlink), nil)
	}
	fs, err := fsOfFd(fd)
	if err != nil {
		return st, unavailable(CauseIO, path, "statfs the fence", err)
	}
	if !fs.HostsFences {
		return st, unavailable(CauseFilesystem, path, "the file is on "+fs.String(), nil)
	}
	return st, nil
}

// lockFd takes the flock, polling with a doubling backoff until deadline
// when wait is set; waiting is called before the first pause.
func lockFd(fd int, path string, exclusive bool, deadline time.Time, wait bool, waiting func()) error {
	how := unix.LOCK_SH
	if exclusive {
		how = unix.LOCK_EX
	}
	pause := time.Millisecond
	for {
		err := retry(func() error { return unix.Flock(fd, how|unix.LOCK_NB) })
		switch {
		case err == nil:
			return nil
		case errors.Is(err, unix.EWOULDBLOCK):
		case errors.Is(err, unix.ENOLCK), errors.Is(err, unix.EOPNOTSUPP), errors.Is(err, unix.EINVAL):
			return unavailable(CauseFilesystem, path, "flock is not supported here", err)
		default:
			return unavailable(CauseIO, path, "flock", err)
		}
		left := time.Until(deadline)
		if !wait || left <= 0 {
			return &InProgressError{Path: path}
		}
		waiting()
		time.Sleep(min(pause, left))
		pause = min(2*pause, maxBackoff)
	}
}

// releaseEntries unlocks and closes every locked entry, last first.
func releaseEntries(entries []entry) error {
	var errs []error
	for i := len(entries) - 1; i >= 0; i-- {
		if e := entries[i]; !e.skipped {
			if err := unlockClose(e.fd); err != nil {
				errs = append(errs, fmt.Errorf("admission: release %s: %w", e.fence.Path(), err))
			}
		}
	}
	return errors.Join(errs...)
}

// unlockClose unlocks the open file description before closing, so a copy
// of the descriptor in a child between fork and exec cannot keep the lock.
func unlockClose(fd int) error {
	err := retry(func() error { return unix.Flock(fd, unix.LOCK_UN) })
	if cerr := unix.Close(fd); err == nil {
		err = cerr
	}
	return err
}

// closeUnlocked closes a read-only descriptor that holds no lock. Its error
// is dropped on purpose: nothing was written through it and no lock can
// outlive it, so no caller could act on the error.
func closeUnlocked(fd int) {
	_ = unix.Close(fd)
}

// fileID answers the device and inode of path, not following a link.
func fileID(path string) (dev, ino uint64, err error) {
	var st unix.Stat_t
	if err := unix.Lstat(path, &st); err != nil {
		return 0, 0, err
	}
	return uint64(st.Dev), st.Ino, nil
}
