//go:build linux

package admission

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The races of a take against a delete, a prune, an archive or an
// attacker that removes, replaces or swaps the fence. The hook (raceHook)
// puts the other party's move at the exact stage a real race would hit, so
// these tests are deterministic; the loops after them race for real, with
// bounded counts.

// withHook sets raceHook for the rest of the test. The tests of this file
// are not parallel, so one hook at a time is enough.
func withHook(t *testing.T, h func(stage, path string)) {
	t.Helper()
	raceHook = h
	t.Cleanup(func() { raceHook = nil })
}

// fenceIn returns the fence beside a document of a fresh directory.
func fenceIn(t *testing.T) Fence {
	t.Helper()
	return DocumentFence(filepath.Join(t.TempDir(), "doc.json"))
}

// writeFence writes a fence at path the way a creator leaves it, mode 0640
// and the directory's group (here the test's own), and puts it in place in
// one rename, as an archive that moves the live fence away for a new one
// would.
func writeFence(path string) error {
	tmp := path + ".new"
	if err := os.WriteFile(tmp, nil, 0o600); err != nil {
		return err
	}
	if err := os.Chmod(tmp, fenceMode); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// linkFence puts a symbolic link to target at path in one rename.
func linkFence(path, target string) error {
	tmp := path + ".link"
	if err := os.Symlink(target, tmp); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// goodFence puts a good fence at path, failing the test if it cannot.
func goodFence(t *testing.T, path string) {
	t.Helper()
	if err := writeFence(path); err != nil {
		t.Fatal(err)
	}
}

// replaceFence renames a new good fence over the one at path.
func replaceFence(t *testing.T, path string) { t.Helper(); goodFence(t, path) }

// removeFence unlinks the fence at path.
func removeFence(t *testing.T, path string) {
	t.Helper()
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
}

// symlinkFence puts a symbolic link to a good fence elsewhere at path.
func symlinkFence(t *testing.T, path string) {
	t.Helper()
	target := filepath.Join(t.TempDir(), "elsewhere.lock")
	goodFence(t, target)
	if err := linkFence(path, target); err != nil {
		t.Fatal(err)
	}
}

// take is one way to take a fence.
type take struct {
	name      string
	exclusive bool
	do        func(Fence) (*held, error)
}

// fourTakes are a guard and a hold, each tried and bounded.
var fourTakes = []take{
	{"guard-try", true, func(f Fence) (*held, error) {
		g, err := Install{}.TryAcquireGuard(f)
		if err != nil {
			return nil, err
		}
		return &g.held, nil
	}},
	{"guard", true, func(f Fence) (*held, error) {
		g, err := Install{}.AcquireGuard(50*time.Millisecond, f)
		if err != nil {
			return nil, err
		}
		return &g.held, nil
	}},
	{"hold-try", false, func(f Fence) (*held, error) {
		h, err := Install{}.TryAcquireHold(f)
		if err != nil {
			return nil, err
		}
		return &h.held, nil
	}},
	{"hold", false, func(f Fence) (*held, error) {
		h, err := Install{}.AcquireHold(50*time.Millisecond, f)
		if err != nil {
			return nil, err
		}
		return &h.held, nil
	}},
}

// holdsThePath checks that a taken set holds the very file its fence's
// path names now, and releases it. A skipped fence must not exist unless
// others may create it meanwhile.
func holdsThePath(t *testing.T, what string, h *held, others bool) {
	t.Helper()
	for _, e := range h.entries {
		var st unix.Stat_t
		err := unix.Lstat(e.fence.Path(), &st)
		switch {
		case e.skipped && (others || errors.Is(err, unix.ENOENT)):
		case e.skipped:
			t.Errorf("%s: skipped a fence that exists (%v)", what, err)
		case err != nil:
			t.Errorf("%s: held, but the fence's path names nothing: %v", what, err)
		case uint64(st.Dev) != e.dev || st.Ino != e.ino:
			t.Errorf("%s: held inode %d, the path names inode %d", what, e.ino, st.Ino)
		}
	}
	if err := h.Release(); err != nil {
		t.Error(err)
	}
}

func TestTakeFollowsAFenceRemovedBetweenOpenAndCheck(t *testing.T) {
	moves := map[string]func(t *testing.T, path string){
		"unlinked": removeFence,
		"replaced": replaceFence,
	}
	for name, move := range moves {
		for _, tk := range fourTakes {
			for _, times := range []int{1, maxFollows - 1} {
				f := fenceIn(t)
				goodFence(t, f.Path())
				n := 0
				withHook(t, func(stage, path string) {
					if stage == "opened" && n < times {
						n++
						move(t, path)
					}
				})
				what := fmt.Sprintf("%s %d times, %s", name, times, tk.name)
				h, err := tk.do(f)
				if err != nil {
					t.Errorf("%s = %v; want held", what, err)
					continue
				}
				holdsThePath(t, what, h, false)
			}
		}
	}
}

func TestTakeAnswersInProgressWhenTheFenceKeepsGoing(t *testing.T) {
	for _, tk := range fourTakes {
		f := fenceIn(t)
		goodFence(t, f.Path())
		opens := 0
		withHook(t, func(stage, path string) {
			if stage == "opened" {
				opens++
				replaceFence(t, path)
			}
		})
		_, err := tk.do(f)
		if !IsInProgress(err) {
			t.Errorf("%s of a fence replaced at every open = %v; want in progress", tk.name, err)
		}
		if opens != maxFollows {
			t.Errorf("%s opened the fence %d times; want %d (the bound on follows)", tk.name, opens, maxFollows)
		}
	}
}

func TestTakeNeverHoldsAFenceRemovedWhileItLocked(t *testing.T) {
	for _, tk := range fourTakes {
		for name, move := range map[string]func(*testing.T, string){
			"unlinked": removeFence,
			"replaced": replaceFence,
		} {
			f := fenceIn(t)
			goodFence(t, f.Path())
			once := false
			withHook(t, func(stage, path string) {
				if stage == "locked" && !once {
					once = true
					move(t, path)
				}
			})
			what := name + " once locked, " + tk.name
			h, err := tk.do(f)
			if err != nil {
				t.Errorf("%s = %v; want held", what, err)
				continue
			}
			holdsThePath(t, what, h, false)
		}
	}
}

func TestAFenceBeingCreatedIsInProgress(t *testing.T) {
	f := fenceIn(t)
	calls := 0
	withHook(t, func(stage, path string) {
		if stage != "created" || calls > 0 {
			return
		}
		calls++
		// Another participant opens the fence its creator has not yet
		// given its mode and group.
		for _, tk := range fourTakes {
			if tk.name == "guard" || tk.name == "hold" {
				continue // a bounded take would wait for the creator, here
			}
			if _, err := tk.do(f); !IsInProgress(err) {
				t.Errorf("%s of a fence being created = %v; want in progress", tk.name, err)
			}
		}
	})
	g, err := Install{}.TryAcquireGuard(f)
	if err != nil {
		t.Fatalf("the creator's guard = %v", err)
	}
	if calls != 1 {
		t.Errorf("the creator's guard passed the stage \"created\" %d times; want 1", calls)
	}
	holdsThePath(t, "the creator's guard", &g.held, false)
}

// TestSymlinkCauseWhateverTheRace swaps the fence to or from a symbolic
// link at each stage of a take. Every refusal must name the symbolic link.
func TestSymlinkCauseWhateverTheRace(t *testing.T) {
	cases := []struct {
		name  string
		start func(*testing.T, string)
		stage string
		move  func(*testing.T, string)
	}{
		{"a link, made a regular file once its open failed", symlinkFence, "open-failed", replaceFence},
		{"a link, removed once its open failed", symlinkFence, "open-failed", removeFence},
		{"a regular file, made a link once opened", goodFence, "opened", symlinkFence},
		{"a regular file, made a link once locked", goodFence, "locked", symlinkFence},
	}
	for _, c := range cases {
		for _, tk := range fourTakes {
			f := fenceIn(t)
			c.start(t, f.Path())
			once := false
			withHook(t, func(stage, path string) {
				if stage == c.stage && !once {
					once = true
					c.move(t, path)
				}
			})
			h, err := tk.do(f)
			if cause, ok := CauseOf(err); !ok || cause != CauseSymlink {
				t.Errorf("%s, %s = %v; want unavailable (symlink)", c.name, tk.name, err)
			}
			if h != nil {
				_ = h.Release()
			}
		}
	}
}

// race runs other while the four takes take f rounds times each, all at
// once, and hands every answer to judge. other runs until the takes are
// done; it must make progress on its own (no waiting on the takes).
func race(t *testing.T, f Fence, rounds int, other func(stop <-chan struct{}), judge func(tk take, h *held, err error)) {
	t.Helper()
	stop := make(chan struct{})
	var others sync.WaitGroup
	others.Add(1)
	go func() { defer others.Done(); other(stop) }()
	var takers sync.WaitGroup
	var mu sync.Mutex
	for _, tk := range fourTakes {
		takers.Add(1)
		go func() {
			defer takers.Done()
			for i := 0; i < rounds; i++ {
				h, err := tk.do(f)
				mu.Lock()
				judge(tk, h, err)
				mu.Unlock()
			}
		}()
	}
	takers.Wait()
	close(stop)
	others.Wait()
}

func TestTakesRaceAPruneLoop(t *testing.T) {
	f := fenceIn(t)
	var prunes, refusals int
	race(t, f, 400, func(stop <-chan struct{}) {
		// A prune takes the fence as a guard, then removes it or moves it
		// away for a new one, and lets go: the one way a live fence goes.
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			g, err := Install{}.TryAcquireGuard(f)
			if err != nil {
				continue
			}
			if i%2 == 0 {
				err = os.Remove(f.Path())
			} else {
				err = os.Rename(f.Path(), f.Path()+".archived")
			}
			if err != nil {
				t.Error(err)
			}
			if err := g.Release(); err != nil {
				t.Error(err)
			}
			prunes++
		}
	}, func(tk take, h *held, err error) {
		switch {
		case err == nil:
			holdsThePath(t, tk.name, h, true)
		case IsInProgress(err):
			refusals++
		default:
			t.Errorf("%s during a prune loop = %v; want held or in progress", tk.name, err)
		}
	})
	t.Logf("%d prunes, %d answers in progress", prunes, refusals)
}

func TestTakesRaceASymlinkSwapLoop(t *testing.T) {
	f := fenceIn(t)
	goodFence(t, f.Path())
	target := filepath.Join(t.TempDir(), "elsewhere.lock")
	goodFence(t, target)
	race(t, f, 400, func(stop <-chan struct{}) {
		// An attacker swaps the fence for a link and back, as fast as it
		// can; it holds nothing, so a take may well hold a file the path
		// no longer names: only the causes are judged.
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			var err error
			if i%2 == 0 {
				err = linkFence(f.Path(), target)
			} else {
				err = writeFence(f.Path())
			}
			if err != nil {
				t.Error(err)
				return
			}
		}
	}, func(tk take, h *held, err error) {
		if h != nil {
			if err := h.Release(); err != nil {
				t.Error(err)
			}
			return
		}
		if cause, ok := CauseOf(err); ok && cause != CauseSymlink {
			t.Errorf("%s during a symlink swap loop = %v; want held, in progress or symlink", tk.name, err)
		}
	})
}
