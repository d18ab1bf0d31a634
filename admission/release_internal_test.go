package admission

import (
	"os"
	"path/filepath"
	"testing"
)

func TestOnlyTheTakingProcessReleases(t *testing.T) {
	f := DocumentFence(filepath.Join(t.TempDir(), "doc"))
	g, err := Install{}.TryAcquireGuard(f)
	if err != nil {
		t.Fatal(err)
	}
	// Pretend the guard was taken by another process: Go cannot fork
	// without exec, so no real other process can own this guard value.
	g.pid = -1
	if err := g.Release(); err == nil {
		t.Fatal("Release from a process that did not take the guard succeeded")
	}
	if _, err := (Install{}).TryAcquireGuard(f); !IsInProgress(err) {
		t.Errorf("after a refused Release, a guard = %v; want in progress (still held)", err)
	}
	g.pid = os.Getpid()
	if err := g.Release(); err != nil {
		t.Fatal(err)
	}
}
