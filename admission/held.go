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

// Release unlocks every fence of the set and closes its descriptors. It
// works only in the process that took the set. In another process it
// returns an error and unlocks nothing (adm:release). A second Release does
// nothing and returns nil. A set that is never released stays held until
// its process ends.
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

// Fences returns the set in its order, both the locked and the skipped
// fences.
func (h *held) Fences() []Fence {
	out := make([]Fence, len(h.entries))
	for i, e := range h.entries {
		out[i] = e.fence
	}
	return out
}

// Skipped returns the fences of the set that were not locked. These are
// the fences on a filesystem that hosts none (in a standalone install),
// and, for a Hold, those whose file did not exist.
func (h *held) Skipped() []Fence {
	var out []Fence
	for _, e := range h.entries {
		if e.skipped {
			out = append(out, e.fence)
		}
	}
	return out
}

// Guard is a set of fences a writer holds in exclusive mode. Get one from
// Install.AcquireGuard or Install.TryAcquireGuard, and pass it to each
// write it covers (see WriteFile and Covers). Its methods are safe for
// concurrent use.
type Guard struct {
	held
}

// Covers reports whether the guard holds the fence of path's directory and
// is not released. The admission.lock beside path must be the very file,
// by device and inode, that the guard locked. A fence the guard skipped,
// on a filesystem that hosts none, covers its directory by path alone.
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

// Hold is a set of fences an admission holds in shared mode. Get one from
// Install.AcquireHold or Install.TryAcquireHold. Its methods are safe for
// concurrent use.
type Hold struct {
	held
}

// acquire checks set and takes each fence in its order, sharing one
// deadline. On a refusal it lets go of what it took and returns the
// refusal.
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
