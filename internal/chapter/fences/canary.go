//go:build linux

package fences

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"golang.org/x/sys/unix"

	"github.com/conform-spi/conform/admission"
)

// The canaries of the built-in helper: each is package admission with one
// deliberate bug in how the helper takes a document's fence, selected by
// FencesBugEnv. The chapter must fail them, naming the obligation broken.
const (
	// BugSharedGuard takes a shared lock where a guard needs an exclusive
	// one (it creates a missing fence first, as a guard does).
	BugSharedGuard = "shared-guard"
	// BugUmaskMode lets the umask shape a new fence's mode, as a creator
	// that passes 0640 to open(2) and never fixes the mode does. Its helper
	// starts with umask 022, under which the mode comes out right.
	BugUmaskMode = "umask-mode"
	// BugFollowSymlink follows a symbolic link at admission.lock and locks
	// whatever it names.
	BugFollowSymlink = "follow-symlink"
	// BugRepairMode quietly gives an existing fence mode 0640 and its
	// directory's group, as far as the helper may, before it takes it,
	// where a fence of another mode or group must be refused and left for
	// its owner to correct.
	BugRepairMode = "repair-mode"
)

// Canaries returns the bugs FencesBugEnv selects.
func Canaries() []string {
	return []string{BugSharedGuard, BugUmaskMode, BugFollowSymlink, BugRepairMode}
}

// startCanary checks the helper's bug and prepares for it.
func (s *server) startCanary() error {
	switch s.bug {
	case "", BugSharedGuard, BugFollowSymlink, BugRepairMode:
	case BugUmaskMode:
		s.umask = 0o022
		unix.Umask(s.umask)
	default:
		return fmt.Errorf("%s=%q: no such canary", FencesBugEnv, s.bug)
	}
	return nil
}

// canaryTake takes a document's fence the canary's way; ok is false when
// the bug does not touch this take, which then goes the right way.
func (s *server) canaryTake(guard, wait bool, bound time.Duration, f admission.Fence) (line string, ok bool) {
	switch {
	case s.bug == BugSharedGuard && guard:
		if _, err := os.Lstat(f.Path()); errors.Is(err, fs.ErrNotExist) {
			if g, err := s.in.TryAcquireGuard(f); err == nil {
				_ = g.Release() // the fence now exists; the bug is what follows
			}
		}
		if wait {
			return s.hold(s.in.AcquireHold(bound, f)), true
		}
		return s.hold(s.in.TryAcquireHold(f)), true
	case s.bug == BugUmaskMode && guard:
		_, before := os.Lstat(f.Path())
		if wait {
			line = s.guard(s.in.AcquireGuard(bound, f))
		} else {
			line = s.guard(s.in.TryAcquireGuard(f))
		}
		if errors.Is(before, fs.ErrNotExist) && line == "held" {
			if err := os.Chmod(f.Path(), os.FileMode(0o640&^s.umask)); err != nil {
				return "error " + err.Error(), true
			}
		}
		return line, true
	case s.bug == BugFollowSymlink:
		if st, err := os.Lstat(f.Path()); err == nil && st.Mode()&fs.ModeSymlink != 0 {
			return s.lockFollowing(guard, f.Path()), true
		}
	case s.bug == BugRepairMode:
		repair(f)
	}
	return "", false
}

// repair gives the regular file at f's path mode 0640 and the group of
// f's directory, ignoring what it may not do; the take then goes the right
// way.
func repair(f admission.Fence) {
	st, err := os.Lstat(f.Path())
	if err != nil || !st.Mode().IsRegular() {
		return
	}
	var dir unix.Stat_t
	if unix.Stat(f.Dir(), &dir) == nil {
		_ = os.Chown(f.Path(), -1, int(dir.Gid))
	}
	_ = os.Chmod(f.Path(), 0o640)
}

// lockFollowing opens path following links and flocks it without waiting.
func (s *server) lockFollowing(exclusive bool, path string) string {
	fd, err := unix.Open(path, unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		return "error " + err.Error()
	}
	how := unix.LOCK_SH
	if exclusive {
		how = unix.LOCK_EX
	}
	if err := unix.Flock(fd, how|unix.LOCK_NB); err != nil {
		_ = unix.Close(fd)
		if errors.Is(err, unix.EWOULDBLOCK) {
			return "refused " + string(admission.CodeInProgress)
		}
		return "error " + err.Error()
	}
	s.held = append(s.held, fdLock(fd))
	return "held"
}

// fdLock is a lock held by an open descriptor; closing it lets go.
type fdLock int

func (l fdLock) Release() error { return unix.Close(int(l)) }
