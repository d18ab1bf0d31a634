package admission

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// ComposedMarker is the file whose presence in any of an install's roots
// makes the install composed (see DetectInstall).
const ComposedMarker = "composed-install.json"

// Install says how an install takes its fences. The zero value is a
// standalone install that reports nothing while it waits.
type Install struct {
	// Composed is true for a composed install. It matters only for a fence
	// whose directory is on a filesystem that hosts no fence. A standalone
	// install skips such a fence: nobody can hold it there. A composed
	// install refuses it with CauseComposed (adm:filesystems).
	Composed bool
	// Waiting, when set, is called on the acquiring goroutine each time a
	// bounded acquire finds a fence held (or still being created) and starts
	// to wait for it. It must not block.
	Waiting func(Fence)
}

// DetectInstall returns the Install for the given roots, usually the
// install's state, user and credential roots. The install is composed when
// any root holds ComposedMarker. A missing root holds nothing. Any other
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

// AcquireGuard locks set in exclusive mode for a writer, in the set's
// order. It creates each fence file that does not exist yet. It waits up
// to bound for holders to let go, then returns *InProgressError. Every
// other refusal is an *UnavailableError. A set that breaks adm:order is
// refused before any fence is touched. After a refusal nothing is held.
//
// Call it before taking any other lock. A caller that has a lock in hand
// uses TryAcquireGuard instead, and so never waits while it holds a lock.
func (in Install) AcquireGuard(bound time.Duration, set ...Fence) (*Guard, error) {
	es, err := acquire(in, true, bound, true, set)
	if err != nil {
		return nil, err
	}
	return &Guard{held: newHeld(es)}, nil
}

// TryAcquireGuard is like AcquireGuard but never waits: it returns
// *InProgressError at once where AcquireGuard would wait, for instance
// while a hold or another guard has a fence of the set. Use it when the
// caller already holds some other lock.
func (in Install) TryAcquireGuard(set ...Fence) (*Guard, error) {
	es, err := acquire(in, true, 0, false, set)
	if err != nil {
		return nil, err
	}
	return &Guard{held: newHeld(es)}, nil
}

// AcquireHold locks set in shared mode for an admission, in the set's
// order. It creates no fence: a fence whose file or directory does not
// exist is skipped, since no writer holds it (adm:no-create). It waits
// up to bound for writers to let go, then returns *InProgressError. Other
// refusals and the rule on other locks are as for AcquireGuard.
func (in Install) AcquireHold(bound time.Duration, set ...Fence) (*Hold, error) {
	es, err := acquire(in, false, bound, true, set)
	if err != nil {
		return nil, err
	}
	return &Hold{held: newHeld(es)}, nil
}

// TryAcquireHold is like AcquireHold but never waits: it returns
// *InProgressError at once where AcquireHold would wait, for instance
// while a guard has a fence of the set. Use it when the caller already
// holds some other lock.
func (in Install) TryAcquireHold(set ...Fence) (*Hold, error) {
	es, err := acquire(in, false, 0, false, set)
	if err != nil {
		return nil, err
	}
	return &Hold{held: newHeld(es)}, nil
}
