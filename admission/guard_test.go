package admission_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/conform-spi/conform/admission"
)

// Two open file descriptions conflict under flock even in one process, so
// these tests exercise exclusion in-process; the chapter does it across
// processes.

func docIn(t *testing.T) (admission.Fence, string) {
	t.Helper()
	dir := t.TempDir()
	return admission.DocumentFence(filepath.Join(dir, "doc.json")), dir
}

func mustGuard(t *testing.T, in admission.Install, set ...admission.Fence) *admission.Guard {
	t.Helper()
	g, err := in.TryAcquireGuard(set...)
	if err != nil {
		t.Fatalf("TryAcquireGuard: %v", err)
	}
	t.Cleanup(func() {
		if err := g.Release(); err != nil {
			t.Errorf("Release: %v", err)
		}
	})
	return g
}

func TestGuardExcludesGuardsAndHolds(t *testing.T) {
	f, _ := docIn(t)
	g := mustGuard(t, admission.Install{}, f)
	if _, err := (admission.Install{}).TryAcquireGuard(f); !admission.IsInProgress(err) {
		t.Errorf("a second guard = %v; want in progress", err)
	}
	if _, err := (admission.Install{}).TryAcquireHold(f); !admission.IsInProgress(err) {
		t.Errorf("a hold under a guard = %v; want in progress", err)
	}
	var p *admission.InProgressError
	if _, err := (admission.Install{}).AcquireHold(20*time.Millisecond, f); !errors.As(err, &p) || p.Code() != admission.CodeInProgress || p.Path != f.Path() {
		t.Errorf("a bounded hold under a guard = %v; want ADMISSION_IN_PROGRESS on %s", err, f.Path())
	}
	if err := g.Release(); err != nil {
		t.Fatal(err)
	}
	h, err := admission.Install{}.TryAcquireHold(f)
	if err != nil {
		t.Fatalf("a hold after the guard let go = %v", err)
	}
	if err := h.Release(); err != nil {
		t.Fatal(err)
	}
}

func TestHoldsShareAndExcludeGuards(t *testing.T) {
	f, _ := docIn(t)
	mustGuard(t, admission.Install{}, f).Release()
	var holds []*admission.Hold
	for i := 0; i < 3; i++ {
		h, err := admission.Install{}.TryAcquireHold(f)
		if err != nil || len(h.Skipped()) != 0 {
			t.Fatalf("hold %d = %v; want locked", i, err)
		}
		holds = append(holds, h)
	}
	if _, err := (admission.Install{}).TryAcquireGuard(f); !admission.IsInProgress(err) {
		t.Errorf("a guard under holds = %v; want in progress", err)
	}
	for _, h := range holds {
		if err := h.Release(); err != nil {
			t.Fatal(err)
		}
	}
	mustGuard(t, admission.Install{}, f)
}

func TestHoldNeverCreatesAFence(t *testing.T) {
	f, dir := docIn(t)
	h, err := admission.Install{}.TryAcquireHold(f)
	if err != nil {
		t.Fatalf("hold of an absent fence = %v; want held (skipped)", err)
	}
	defer h.Release()
	if s := h.Skipped(); len(s) != 1 || s[0] != f {
		t.Errorf("Skipped() = %v; want [%v]", s, f)
	}
	if _, err := os.Lstat(filepath.Join(dir, admission.FenceFile)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the hold created a fence: %v", err)
	}
	missing := admission.DocumentFence(filepath.Join(dir, "no", "such", "doc"))
	if h2, err := (admission.Install{}).TryAcquireHold(missing); err != nil || len(h2.Skipped()) != 1 {
		t.Errorf("hold in a missing directory = %v; want held (skipped)", err)
	}
	if _, err := (admission.Install{}).TryAcquireGuard(missing); !hasCause(err, admission.CauseIO) || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("guard in a missing directory = %v; want an io refusal wrapping not-exist", err)
	}
}

func TestAcquireWaitsThenGivesUpOrTakesIt(t *testing.T) {
	f, _ := docIn(t)
	holder := mustGuard(t, admission.Install{}, f)
	waits := 0
	in := admission.Install{Waiting: func(got admission.Fence) {
		if got != f {
			t.Errorf("Waiting(%v); want %v", got, f)
		}
		waits++
	}}
	if _, err := in.AcquireGuard(30*time.Millisecond, f); !admission.IsInProgress(err) {
		t.Fatalf("bounded acquire under a holder = %v; want in progress", err)
	}
	if waits != 1 {
		t.Errorf("Waiting called %d times; want 1", waits)
	}
	// The holder lets go once the acquire reports that it waits.
	released := make(chan error, 1)
	in.Waiting = func(admission.Fence) { go func() { released <- holder.Release() }() }
	g, err := in.AcquireGuard(time.Minute, f)
	if err != nil {
		t.Fatalf("acquire after the holder let go = %v", err)
	}
	if err := <-released; err != nil {
		t.Fatal(err)
	}
	if err := g.Release(); err != nil {
		t.Fatal(err)
	}
}

func TestAcquireFollowsAFenceReplacedWhileItWaited(t *testing.T) {
	f, dir := docIn(t)
	holder := mustGuard(t, admission.Install{}, f)
	// The migration archive moves the live fence away while it holds it,
	// then lets go; the moved file keeps its inode, so the new fence cannot
	// reuse it.
	moved := filepath.Join(t.TempDir(), "archived.lock")
	in := admission.Install{Waiting: func(admission.Fence) {
		if err := os.Rename(f.Path(), moved); err != nil {
			t.Error(err)
		}
		if err := holder.Release(); err != nil {
			t.Error(err)
		}
	}}
	g, err := in.AcquireGuard(time.Minute, f)
	if err != nil {
		t.Fatalf("acquire = %v", err)
	}
	defer g.Release()
	before, err := os.Stat(moved)
	if err != nil {
		t.Fatal(err)
	}
	after, err := os.Stat(f.Path())
	if err != nil {
		t.Fatalf("no fence after the acquire: %v", err)
	}
	if os.SameFile(before, after) {
		t.Error("the guard kept the moved fence; want a new one")
	}
	if !g.Covers(filepath.Join(dir, "doc.json")) {
		t.Error("the guard does not cover its directory")
	}
}

func TestReleaseIsIdempotentAndEndsCover(t *testing.T) {
	f, dir := docIn(t)
	g := mustGuard(t, admission.Install{}, f)
	doc := filepath.Join(dir, "doc.json")
	if !g.Covers(doc) {
		t.Fatal("a held guard does not cover its document")
	}
	if err := g.Release(); err != nil {
		t.Fatal(err)
	}
	if err := g.Release(); err != nil {
		t.Errorf("second Release = %v; want nil", err)
	}
	if g.Covers(doc) {
		t.Error("a released guard still covers")
	}
}

func TestCoversByFenceFile(t *testing.T) {
	f, dir := docIn(t)
	g := mustGuard(t, admission.Install{}, f)
	alias := filepath.Join(t.TempDir(), "alias")
	if err := os.Symlink(dir, alias); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]bool{
		filepath.Join(dir, "other.json"):        true,
		filepath.Join(alias, "other.json"):      true,
		filepath.Join(dir, "sub", "x.json"):     false,
		filepath.Join(t.TempDir(), "elsewhere"): false,
	} {
		if got := g.Covers(path); got != want {
			t.Errorf("Covers(%s) = %v; want %v", path, got, want)
		}
	}
	// A fence file replaced under the guard is no longer the one it holds.
	if err := os.Remove(f.Path()); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(f.Path(), nil, 0o640); err != nil {
		t.Fatal(err)
	}
	if g.Covers(filepath.Join(dir, "other.json")) {
		t.Error("Covers after the fence file was replaced = true")
	}
}

func TestWriteFileTakesOnlyACoveringGuard(t *testing.T) {
	f, dir := docIn(t)
	g := mustGuard(t, admission.Install{}, f)
	doc := filepath.Join(dir, "doc.json")
	if err := admission.WriteFile(g, doc, []byte("v1"), 0o600); err != nil {
		t.Fatalf("WriteFile under a covering guard: %v", err)
	}
	if b, err := os.ReadFile(doc); err != nil || string(b) != "v1" {
		t.Errorf("read back %q, %v; want v1", b, err)
	}
	if info, err := os.Stat(doc); err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("written mode = %v, %v; want 0600", info.Mode(), err)
	}
	elsewhere := filepath.Join(t.TempDir(), "doc.json")
	var unc *admission.UncoveredError
	if err := admission.WriteFile(g, elsewhere, []byte("x"), 0o600); !errors.As(err, &unc) || unc.Path != elsewhere {
		t.Errorf("WriteFile outside the guard = %v; want UncoveredError", err)
	}
	if _, err := os.Lstat(elsewhere); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("an uncovered write left a file: %v", err)
	}
	if err := admission.WriteFile(g, f.Path(), []byte("x"), 0o600); err == nil {
		t.Error("WriteFile of the fence file itself succeeded")
	}
	if err := g.Release(); err != nil {
		t.Fatal(err)
	}
	if err := admission.WriteFile(g, doc, []byte("v2"), 0o600); !errors.As(err, &unc) {
		t.Errorf("WriteFile under a released guard = %v; want UncoveredError", err)
	}
	if b, _ := os.ReadFile(doc); string(b) != "v1" {
		t.Errorf("document = %q after refused writes; want v1", b)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 2 {
		t.Errorf("directory holds %d entries; want the fence and the document only", len(entries))
	}
}
