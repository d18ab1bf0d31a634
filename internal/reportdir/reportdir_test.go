package reportdir

import (
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// entries lists the names in dir, sorted.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatalf("read dir: %v", err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	return names
}

func TestRemoveStaleKeepsALiveWriters(t *testing.T) {
	top := t.TempDir()
	dir := filepath.Join(top, "out")
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	deadDir := filepath.Join(top, ".out.conform-new-"+strconv.Itoa(dead.Process.Pid)+"-1")
	liveDir := filepath.Join(top, stalePrefix("out", "new")+"1")
	other := filepath.Join(top, ".other.conform-new-1-1") // another dir's
	for _, d := range []string{deadDir, liveDir, other, dir} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if n := RemoveStale(dir); n != 1 {
		t.Errorf("RemoveStale removed %d, want 1", n)
	}
	want := []string{filepath.Base(other), filepath.Base(liveDir), "out"}
	sort.Strings(want)
	if got := entries(t, top); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("left %v, want %v", got, want)
	}
}

func TestCheckDirCreatesNothing(t *testing.T) {
	top := t.TempDir()
	if err := CheckDir(filepath.Join(top, "a", "b")); err != nil {
		t.Fatalf("CheckDir of a new nested dir: %v", err)
	}
	if got := entries(t, top); len(got) != 0 {
		t.Errorf("CheckDir left %v", got)
	}
	file := filepath.Join(top, "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := CheckDir(file); err == nil {
		t.Error("CheckDir accepted a regular file")
	}
	if err := CheckDir(filepath.Join(file, "x")); err == nil {
		t.Error("CheckDir accepted a dir under a regular file")
	}
}
