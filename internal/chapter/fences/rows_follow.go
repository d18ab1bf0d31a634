//go:build linux

package fences

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"github.com/conform-spi/conform/internal/spec"
	"golang.org/x/sys/unix"

	"github.com/conform-spi/conform/admission"
)

// removedRounds is how many guard tries and as many hold tries the removed
// row sends while the fence is pruned under them.
const removedRounds = 1000

// The follow row: a holder that removes or replaces the fence, as a delete,
// a prune or an archive does, races the helper's guards and holds. The
// chapter is that holder: it flocks the fence exclusively, checks that the
// path still names what it locked, and only then removes the fence or
// renames a new one over it, so a helper that holds the fence the path
// names can never see it go.

func rowRemoved(r *rowRun) {
	d := r.dir()
	fence := filepath.Join(d, admission.FenceFile)
	a := r.start("A", procOpts{})
	a.expect(ObFollow, "guard-try "+d, held, "create the fence")
	a.expect(ObFollow, "release", released, "let go")
	p := startPruner(fence)
	defer p.stop()
	counts := map[string]int{}
	for i := 0; i < 2*removedRounds; i++ {
		cmd, probe := "guard-try", unix.LOCK_SH
		if i%2 == 1 {
			cmd, probe = "hold-try", unix.LOCK_EX
		}
		got := a.do(ObFollow, cmd+" "+d)
		counts[got]++
		switch {
		case got == held:
			r.checkHeld(fence, i, cmd, probe)
		case got == inProgress, cmd == "hold-try" && got == "held skipped=1":
			continue
		case strings.HasPrefix(got, held+" "):
			// A guard skipped the fence: it holds nothing exclusively.
			r.fail(ObExclusion, fmt.Sprintf("round %d: a guard of a fence on a filesystem that hosts fences", i), held, got)
		default:
			r.fail(ObFollow, fmt.Sprintf("round %d: %s of a fence a holder removes and replaces", i, cmd), held+" or "+inProgress, got)
		}
		a.expect(ObFollow, "release", released, "let go")
	}
	prunes, err := p.stop()
	r.setup(err, "prune the fence")
	r.note("%d prunes; answers %v", prunes, counts)
}

// checkHeld checks that the fence at the path is the one the helper says it
// holds, by flocks of its own: a guard's must keep out LOCK_SH, a hold's
// LOCK_EX. A guard's fence that lets LOCK_SH in but not LOCK_EX is held,
// only shared: a breach of exclusion rather than of following.
func (r *rowRun) checkHeld(fence string, round int, cmd string, probe int) {
	spec.Helper()
	if excludes(fence, probe) {
		return
	}
	why := fmt.Sprintf("round %d: helper A answered %q to %s, so the file at the fence's path must keep out flock(%s)", round, held, cmd, lockName(probe))
	if probe == unix.LOCK_SH && excludes(fence, unix.LOCK_EX) {
		r.fail(ObExclusion, why, "a file A locks exclusively", "a file A locks shared")
	}
	r.fail(ObFollow, why, "the file at the path, locked by A", "a file at the path that A does not lock")
}

// excludes reports whether the file at path is locked so that a flock
// of how (LOCK_SH or LOCK_EX) cannot be had; false also when nothing is
// at path.
func excludes(path string, how int) bool {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	err = unix.Flock(fd, how|unix.LOCK_NB)
	return errors.Is(err, unix.EWOULDBLOCK)
}

// lockName returns the name of a flock(2) operation, for messages.
func lockName(how int) string {
	if how == unix.LOCK_EX {
		return "LOCK_EX"
	}
	return "LOCK_SH"
}

// pruner removes and replaces a fence in a loop, each time while it holds
// it, until stopped.
type pruner struct {
	fence  string
	done   chan struct{}
	wg     sync.WaitGroup
	once   sync.Once
	prunes int
	err    error
}

// startPruner starts pruning fence in a goroutine of its own.
func startPruner(fence string) *pruner {
	p := &pruner{fence: fence, done: make(chan struct{})}
	p.wg.Add(1)
	go p.run()
	return p
}

// stop ends the loop and returns how many prunes it made and the error that
// ended it early, if any. A second stop returns the same.
func (p *pruner) stop() (int, error) {
	p.once.Do(func() { close(p.done) })
	p.wg.Wait()
	return p.prunes, p.err
}

// run prunes until stopped, removing the fence and renaming a new one over
// it in turn.
func (p *pruner) run() {
	defer p.wg.Done()
	for i := 0; ; i++ {
		select {
		case <-p.done:
			return
		default:
		}
		ok, err := p.prune(i%2 == 0)
		if err != nil {
			p.err = err
			return
		}
		if ok {
			p.prunes++
		} else {
			runtime.Gosched()
		}
	}
}

// prune takes the fence exclusively without waiting and, when the path
// still names it, removes it (or renames a new fence over it, mode 0640
// and its directory's group); ok is false when there was nothing to take.
func (p *pruner) prune(remove bool) (ok bool, err error) {
	fd, err := unix.Open(p.fence, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		// Gone (a hold skips it, a guard makes a new one), or for a
		// moment no file the chapter may open: try again.
		return false, nil
	}
	defer unix.Close(fd)
	if unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB) != nil {
		return false, nil
	}
	var locked, cur unix.Stat_t
	if err := unix.Fstat(fd, &locked); err != nil {
		return false, err
	}
	if err := unix.Lstat(p.fence, &cur); err != nil || cur.Ino != locked.Ino || cur.Dev != locked.Dev {
		return false, nil
	}
	if remove {
		return true, os.Remove(p.fence)
	}
	var dir unix.Stat_t
	if err := unix.Stat(filepath.Dir(p.fence), &dir); err != nil {
		return false, err
	}
	next := p.fence + ".next"
	if err := os.WriteFile(next, nil, 0o600); err != nil {
		return false, err
	}
	if err := os.Chown(next, -1, int(dir.Gid)); err != nil {
		return false, err
	}
	if err := os.Chmod(next, 0o640); err != nil {
		return false, err
	}
	return true, os.Rename(next, p.fence)
}
