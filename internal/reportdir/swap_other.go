//go:build !linux

package reportdir

import (
	"errors"
	"os"
	"syscall"
)

// exchange returns false: only Linux swaps two directories in one step.
func exchange(a, b string) (bool, error) { return false, nil }

// alive reports whether process pid still runs; where that cannot be told,
// it returns true, so nothing of a live writer is removed.
func alive(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	err = p.Signal(syscall.Signal(0))
	return err == nil || !errors.Is(err, os.ErrProcessDone)
}
