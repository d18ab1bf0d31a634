package admission

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// ComposedMarker is the file whose presence in an install's roots makes the
// install composed.
const ComposedMarker = "composed-install.json"

// Install is how an install takes its fences. The zero value is a
// standalone install that reports nothing while it waits.
type Install struct {
	// Composed: the install is composed. "On any other filesystem a
	// standalone install skips the fence, since no holder can exist there. A
	// composed install ... never skips: such a fence refuses with
	// ADMISSION_FENCE_UNAVAILABLE" (CauseComposed).
	Composed bool
	// Waiting, when set, is called on the acquiring goroutine each time a
	// bounded acquire finds a fence held (or still being created) and starts
	// to wait for it. It must not block.
	Waiting func(Fence)
}

// DetectInstall answers the install whose roots (the state root, the user
// root and the credential root) are given: composed when any of them holds
// composed-install.json. A root that does not exist holds nothing; any other
// error reading a root is returned.
func DetectInstall(roots ...string) (Install, error) {
	for _, root := range roots {
		_, err := os.Lstat(filepath.Join(root, ComposedMarker))
		switch {
		case err == nil:
			return Install{Composed: true}, nil
		case errors.Is(err, fs.ErrNotExist):
		default:
			return Install{}, fmt.Errorf("admission: detect a composed install: %w", err)
		}
	}
	return Install{}, nil
}

// AcquireGuard takes set EXCLUSIVE for a writer, creating each fence file
// that does not exist yet. A fenced operation that waits takes its fences
// before any other lock it takes. It waits up to bound for holders to let go, then
// answers *InProgressError; any other refusal is an *UnavailableError. A set
// that breaks the order rules is refused before anything is touched. On a
// refusal nothing is held.
func (in Install) AcquireGuard(bound time.Duration, set ...Fence) (*Guard, error) {
	es, err := acquire(in, true, bound, true, set)
	if err != nil {
		return nil, err
	}
	return &Guard{held: newHeld(es)}, nil
}

// TryAcquireGuard is AcquireGuard that never waits: a held fence answers
// *InProgressError at once. It is the only form an operation that already
// holds another lock may use ("An operation that already holds another lock
// takes its fences only with the form that never waits").
func (in Install) TryAcquireGuard(set ...Fence) (*Guard, error) {
	es, err := acquire(in, true, 0, false, set)
	if err != nil {
		return nil, err
	}
	return &Guard{held: newHeld(es)}, nil
}

// AcquireHold takes set SHARED for an admission. It never creates a fence:
// a fence file (or directory) that does not exist is skipped, since no
// writer holds it. It waits up to bound for writers to let go, then answers
// *InProgressError; otherwise as AcquireGuard.
func (in Install) AcquireHold(bound time.Duration, set ...Fence) (*Hold, error) {
	es, err := acquire(in, false, bound, true, set)
	if err != nil {
		return nil, err
	}
	return &Hold{held: newHeld(es)}, nil
}

// TryAcquireHold is AcquireHold that never waits; like TryAcquireGuard, it
// is the form for an operation that already holds another lock.
func (in Install) TryAcquireHold(set ...Fence) (*Hold, error) {
	es, err := acquire(in, false, 0, false, set)
	if err != nil {
		return nil, err
	}
	return &Hold{held: newHeld(es)}, nil
}
