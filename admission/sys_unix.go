//go:build linux || darwin

package admission

import (
	"errors"
	"fmt"
	"time"

	"golang.org/x/sys/unix"
)

// fenceMode is the mode of every fence file, set with fchmod so the umask
// plays no part (adm:permissions).
const fenceMode = 0o640

// maxBackoff caps the pause between two polls of a held fence.
const maxBackoff = 50 * time.Millisecond

// maxFollows bounds how often one take opens a fence that then turns out
// removed or replaced before it was locked and checked (a delete, a prune
// or an archive at work): the take follows it to the file the path names
// now, and returns *InProgressError once it has opened maxFollows files in
// vain.
const maxFollows = 8

// createRaces bounds how often a guard finds a fence gone, then there
// again when it creates one, before it returns *InProgressError.
const createRaces = 16

// errGone: the open fence has no link left; it was removed after the open.
var errGone = errors.New("admission: the fence was removed")

// errUnsettled: the fence has no permission bits at all, the mode its
// creator gives it until its group is right.
var errUnsettled = errors.New("admission: the fence is being created")

// raceHook, set only by tests, runs at a named stage of a take: "created"
// (a guard created the fence, not yet settled), "opened" (the fence is
// open, not yet checked), "open-failed" (its open failed, the failure not
// yet classified) and "locked" (locked, not yet checked to be the file at
// the path). It lets a test remove, replace or swap the fence
// at exactly the point where a concurrent delete or prune could.
var raceHook func(stage, path string)

// hook runs raceHook, when a test set one, at stage.
func hook(stage, path string) {
	if raceHook != nil {
		raceHook(stage, path)
	}
}

// StatFilesystem returns what dir's filesystem is and whether it hosts
// fences. It calls statfs(2) and looks the result up in the table of
// filesystems where flock is native.
func StatFilesystem(dir string) (Filesystem, error) {
	var st unix.Statfs_t
	if err := retry(func() error { return unix.Statfs(dir, &st) }); err != nil {
		return Filesystem{}, err
	}
	return classify(&st), nil
}

// fsOfFd is StatFilesystem for an open file.
func fsOfFd(fd int) (Filesystem, error) {
	var st unix.Statfs_t
	if err := retry(func() error { return unix.Fstatfs(fd, &st) }); err != nil {
		return Filesystem{}, err
	}
	return classify(&st), nil
}

// retry runs a system call again while it fails with EINTR.
func retry(call func() error) error {
	for {
		if err := call(); !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}

// takeFence takes one fence: it decides on the directory's filesystem,
// opens (a guard: creates) the file without following a link, checks it,
// locks it, and checks that the path still names what it locked. A fence
// removed or replaced before that last check is followed (maxFollows); a
// fence still being created is waited for as a held one is.
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
	b := backoff{deadline: deadline, wait: wait, waiting: func() {
		if waiting != nil {
			waiting(f)
			waiting = nil
		}
	}}
	for opened := 0; ; {
		fd, err := openFence(dfd, path, exclusive)
		switch {
		case !exclusive && errors.Is(err, unix.ENOENT):
			return skip(f)
		case errors.Is(err, errUnsettled):
			if !b.pause() {
				return entry{}, &InProgressError{Path: path}
			}
			continue
		case err != nil:
			return entry{}, err
		}
		opened++
		hook("opened", path)
		st, err := checkFence(dfd, fd, path)
		if err == nil {
			err = lockFd(fd, path, exclusive, &b)
		}
		if err == nil {
			hook("locked", path)
			var same bool
			if same, err = stillAt(dfd, path, &st); same {
				return entry{fence: f, fd: fd, dev: uint64(st.Dev), ino: st.Ino}, nil
			}
		}
		switch {
		case err == nil, errors.Is(err, errGone):
			// Removed or replaced since the open: let it go and follow
			// the path to what it names now.
			if err := unlockClose(fd); err != nil {
				return entry{}, unavailable(CauseIO, path, "let go of a removed fence", err)
			}
			if opened >= maxFollows || wait && !time.Now().Before(deadline) {
				return entry{}, &InProgressError{Path: path}
			}
		case errors.Is(err, errUnsettled):
			closeUnlocked(fd)
			if !b.pause() {
				return entry{}, &InProgressError{Path: path}
			}
		default:
			// Unlocks too when the refusal came after the lock.
			if cerr := unlockClose(fd); cerr != nil {
				err = errors.Join(err, cerr)
			}
			return entry{}, err
		}
	}
}

// stillAt reports whether the fence's path names the locked file st, with
// one link: the check that makes a lock on a removed or replaced fence
// never count as held. A path that names nothing (or something else) is
// not an error: the caller follows it.
func stillAt(dfd int, path string, st *unix.Stat_t) (bool, error) {
	var cur unix.Stat_t
	err := retry(func() error { return unix.Fstatat(dfd, FenceFile, &cur, unix.AT_SYMLINK_NOFOLLOW) })
	switch {
	case errors.Is(err, unix.ENOENT):
		return false, nil
	case err != nil:
		return false, osRefusal(path, "stat the fence's path", err)
	}
	return cur.Dev == st.Dev && cur.Ino == st.Ino && cur.Nlink == 1, nil
}

// openFence opens the fence file in the directory dfd without following a
// link, close-on-exec and without blocking (a FIFO would block). A guard
// creates it exclusively when it does not exist, with no permission bits,
// then gives it the directory's group and mode 0640 (settle); a
// participant that opens it meanwhile finds it unsettled (errUnsettled).
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
			fd, err = unix.Openat(dfd, FenceFile, flags|unix.O_CREAT|unix.O_EXCL, 0)
			return err
		})
		if errors.Is(err, unix.EEXIST) {
			continue // another participant created it first: open theirs
		}
		if err != nil {
			return -1, openRefusal(dfd, path, err)
		}
		hook("created", path)
		if err := settle(dfd, fd, path); err != nil {
			closeUnlocked(fd)
			return -1, err
		}
		return fd, nil
	}
}

// settle gives a fence its creator just made (with no permission bits) the
// directory's group, unless a setgid directory already gave it, then mode
// exactly 0640. The mode comes last and is given also when the group could
// not be: from then on every participant sees the fence as settled, and
// one of the wrong group is refused by all of them alike until its owner
// corrects it. When the group or the mode cannot be set, settle returns a
// CausePermissions refusal. The file stays, since another participant may
// have opened it already.
func settle(dfd, fd int, path string) error {
	var dir, file unix.Stat_t
	if err := unix.Fstat(dfd, &dir); err != nil {
		return unavailable(CauseIO, path, "stat the directory", err)
	}
	if err := unix.Fstat(fd, &file); err != nil {
		return unavailable(CauseIO, path, "stat the new fence", err)
	}
	var group error
	if file.Gid != dir.Gid {
		if err := unix.Fchown(fd, -1, int(dir.Gid)); err != nil {
			group = unavailable(CausePermissions, path, fmt.Sprintf("give the new fence the directory's group %d", dir.Gid), err)
		}
	}
	if err := unix.Fchmod(fd, fenceMode); err != nil {
		return errors.Join(group, unavailable(CausePermissions, path, "give the new fence mode 0640", err))
	}
	return group
}

// checkFence returns the open fence's stat, and an error unless the file
// is fit to lock: a regular file, with exactly one link, on a filesystem
// that hosts fences, with mode 0640 and its directory's group. It returns
// errGone for a file with no link left, and errUnsettled for one with no
// permission bits.
func checkFence(dfd, fd int, path string) (unix.Stat_t, error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return st, unavailable(CauseIO, path, "stat the fence", err)
	}
	if t := uint32(st.Mode) & unix.S_IFMT; t != unix.S_IFREG {
		return st, unavailable(CauseNotRegular, path, fileType(t), nil)
	}
	if st.Nlink == 0 {
		return st, errGone
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
	return st, checkPermissions(dfd, &st, path)
}

// checkPermissions refuses a settled fence whose mode is not exactly 0640
// or whose group is not its directory's, naming the owner who can correct
// it; the file is left as it is. Its owner is not checked: whichever
// participant came first created it.
func checkPermissions(dfd int, st *unix.Stat_t, path string) error {
	perm := uint32(st.Mode) & 0o7777
	if perm == 0 {
		return errUnsettled
	}
	if perm != fenceMode {
		return unavailable(CausePermissions, path, fmt.Sprintf("mode %04o, not 0640, until its owner (uid %d) corrects it", perm, st.Uid), nil)
	}
	var dir unix.Stat_t
	if err := unix.Fstat(dfd, &dir); err != nil {
		return unavailable(CauseIO, path, "stat the directory", err)
	}
	if st.Gid != dir.Gid {
		return unavailable(CausePermissions, path, fmt.Sprintf("group %d, not the directory's group %d, until its owner (uid %d) corrects it", st.Gid, dir.Gid, st.Uid), nil)
	}
	return nil
}

// backoff paces the polls of a take that waits: a doubling pause (1ms up
// to maxBackoff) that never sleeps past the deadline.
type backoff struct {
	deadline time.Time
	wait     bool
	waiting  func() // called before the first pause
	last     time.Duration
}

// pause sleeps before the next attempt and reports whether there is one:
// false when the take does not wait or its deadline has passed.
func (b *backoff) pause() bool {
	left := time.Until(b.deadline)
	if !b.wait || left <= 0 {
		return false
	}
	b.waiting()
	b.last = min(max(2*b.last, time.Millisecond), maxBackoff)
	time.Sleep(min(b.last, left))
	return true
}

// lockFd takes the flock, polling with b until its deadline when the take
// waits.
func lockFd(fd int, path string, exclusive bool, b *backoff) error {
	how := unix.LOCK_SH
	if exclusive {
		how = unix.LOCK_EX
	}
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
		if !b.pause() {
			return &InProgressError{Path: path}
		}
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

// fileID returns the device and inode of path, not following a link.
func fileID(path string) (dev, ino uint64, err error) {
	var st unix.Stat_t
	if err := unix.Lstat(path, &st); err != nil {
		return 0, 0, err
	}
	return uint64(st.Dev), st.Ino, nil
}
