//go:build !linux && !darwin

package admission

import (
	"errors"
	"os"
	"time"
)

// StatFilesystem returns what dir's filesystem is and whether it hosts
// fences. On this platform none does: only Linux and macOS host fences.
func StatFilesystem(dir string) (Filesystem, error) {
	if _, err := os.Stat(dir); err != nil {
		return Filesystem{}, err
	}
	return Filesystem{Name: "unsupported platform"}, nil
}

// takeFence never locks here: a standalone install skips, a composed
// install refuses.
func takeFence(in Install, f Fence, _ bool, _ time.Time, _ bool) (entry, error) {
	if in.Composed {
		return entry{}, unavailable(CauseComposed, f.Path(), "this platform hosts no fence", nil)
	}
	return skip(f)
}

// releaseEntries has nothing to unlock: every entry here is skipped.
func releaseEntries([]entry) error { return nil }

var errNoID = errors.New("admission: no file ids on this platform")

// fileID is never needed here: no entry is locked.
func fileID(string) (uint64, uint64, error) { return 0, 0, errNoID }
