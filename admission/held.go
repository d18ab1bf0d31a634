package admission

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// entry is one fence of a taken set: locked through fd, or skipped.
type entry struct {
	fence    Fence
	fd       int
	dev, ino uint64
	skipped  bool
	absDir   string // skipped entries: the directory, absolute
}

// held is what a Guard and a Hold share: the taken set and who took it.
type held struct {
	mu       sync.Mutex
	pid      int
	entries  []entry
	released bool
}

// Release unlocks every fence of the set and closes its descriptors. Only
// the process that took the set unlocks it: called from any other process
// it answers an error and unlocks nothing. A second Release is a no-op. A
// set that is never released is held until its process ends.
func (h *held) Release() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.released {
		return nil
	}
	if pid := os.Getpid(); pid != h.pid {
		return fmt.Errorf("admission: process %d cannot release fences taken by process %d", pid, h.pid)
	}
	h.released = true
	return releaseEntries(h.entries)
}

// Fences lists the set in its order, locked or skipped.
func (h *held) Fences() []Fence {
	out := make([]Fence, len(h.entries))
	for i, e := range h.entries {
		out[i] = e.fence
	}
	return out
}

// Skipped lists the fences of the set that were not locked: those on a
// filesystem that hosts no fence (a standalone install), and for a Hold
// those whose file did not exist.
func (h *held) Skipped() []Fence {
	var out []Fence
	for _, e := range h.entries {
		if e.skipped {
			out = append(out, e.fence)
		}
	}
	return out
}

// Guard is a set of fences held EXCLUSIVE by a writer. Its methods are safe
// for concurrent use.
type Guard struct {
	held
}

// Covers reports whether the guard, not yet released, holds the fence of
// path's directory: the file <dir of path>/admission.lock is the very file
// (device and inode) the guard locked. A fence the guard skipped (a
// filesystem that hosts none) covers the files of its directory, by path.
func (g *Guard) Covers(path string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.released {
		return false
	}
	dir, err := filepath.Abs(filepath.Dir(path))
	if err != nil {
		return false
	}
	dev, ino, idErr := fileID(filepath.Join(dir, FenceFile))
	for _, e := range g.entries {
		if e.skipped && e.absDir == dir || !e.skipped && idErr == nil && dev == e.dev && ino == e.ino {
			return true
		}
	}
	return false
}

// Hold is a set of fences held SHARED by an admission. Its methods are safe
// for concurrent use.
type Hold struct {
	held
}

// errBusy is lockFd's answer when the fence stays held past the deadline.
var errBusy = errors.New("admission: fence busy")

// acquire checks set and takes each fence in its order, sharing one deadline.
func acquire(in Install, exclusive bool, bound time.Duration, wait bool, set []Fence) ([]entry, error) {
	if err := checkSet(set); err != nil {
		return nil, err
	}
	deadline := time.Now().Add(bound)
	entries := make([]entry, 0, len(set))
	for _, f := range set {
		e, err := takeFence(in, f, exclusive, deadline, wait)
		if err != nil {
			if rerr := releaseEntries(entries); rerr != nil {
				err = errors.Join(err, rerr)
			}
			return nil, err
		}
		entries = append(entries, e)
	}
	return entries, nil
}

// newHeld records entries as taken by this process.
func newHeld(entries []entry) held {
	return held{pid: os.Getpid(), entries: entries}
}

// skip is the entry of a fence that is not locked.
func skip(f Fence) (entry, error) {
	abs, err := filepath.Abs(f.dir)
	if err != nil {
		return entry{}, unavailable(CauseIO, f.Path(), "resolve the directory", err)
	}
	return entry{fence: f, fd: -1, skipped: true, absDir: abs}, nil
}
