package reports

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"

	"github.com/conform-spi/conform/internal/reportdir"
)

// rendered returns what the writer of name makes of run.
func rendered(t *testing.T, name string, run *Run) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := writers[name](&buf, run); err != nil {
		t.Fatalf("render %s: %v", name, err)
	}
	return buf.Bytes()
}

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

func sortedFiles() []string {
	f := append([]string(nil), reportdir.Files...)
	sort.Strings(f)
	return f
}

func TestWriteAllWritesTheFourFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "b") // parents are created
	run := sampleRun()
	if err := WriteAll(dir, run); err != nil {
		t.Fatalf("WriteAll: %v", err)
	}
	if got := entries(t, dir); strings.Join(got, " ") != strings.Join(sortedFiles(), " ") {
		t.Fatalf("dir holds %v, want exactly %v", got, reportdir.Files)
	}
	for _, name := range reportdir.Files {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatalf("read %s: %v", name, err)
		}
		if !bytes.Equal(data, rendered(t, name, run)) {
			t.Errorf("%s differs from what its writer renders", name)
		}
		if fi, err := os.Stat(filepath.Join(dir, name)); err != nil || fi.Mode().Perm() != 0o644 {
			t.Errorf("%s mode = %v, %v; want 0644", name, fi.Mode().Perm(), err)
		}
	}
	f, err := os.Open(filepath.Join(dir, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	back, err := ReadJSON(f)
	if err != nil || back.Seed != run.Seed || len(back.Rows) != len(run.Rows) {
		t.Errorf("report.json does not read back: %v", err)
	}
}

func TestWriteAllUnwritableDir(t *testing.T) {
	file := filepath.Join(t.TempDir(), "plain")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(file, "sub")
	err := WriteAll(dir, sampleRun())
	if err == nil {
		t.Fatal("WriteAll under a regular file succeeded")
	}
	if !strings.Contains(err.Error(), dir) {
		t.Errorf("error %q does not name %s", err, dir)
	}
	if got := entries(t, filepath.Dir(file)); len(got) != 1 {
		t.Errorf("WriteAll left %v next to the file", got)
	}
}

func TestWriteAllRefusesAForeignDir(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := WriteAll(dir, sampleRun())
	if !errors.Is(err, reportdir.ErrForeignDir) || !strings.Contains(err.Error(), "notes.txt") {
		t.Fatalf("WriteAll = %v, want ErrForeignDir naming notes.txt", err)
	}
	if got := entries(t, dir); strings.Join(got, " ") != "notes.txt" {
		t.Errorf("dir holds %v after a refused write, want only notes.txt", got)
	}
	if err := reportdir.CheckDir(dir); !errors.Is(err, reportdir.ErrForeignDir) {
		t.Errorf("CheckDir = %v, want ErrForeignDir", err)
	}
}

func TestWriteAllReplacesTheSetWhole(t *testing.T) {
	top := t.TempDir()
	dir := filepath.Join(top, "out")
	big := sampleRun()
	big.Rows[2].Output = strings.Repeat("long log line\n", 1<<16) // a report.json far longer than the next
	if err := WriteAll(dir, big); err != nil {
		t.Fatalf("first WriteAll: %v", err)
	}
	// Hard links outside dir keep the old files' inodes: replacing leaves
	// them whole, an in-place rewrite would change them.
	keep := t.TempDir()
	for _, name := range reportdir.Files {
		if err := os.Link(filepath.Join(dir, name), filepath.Join(keep, name)); err != nil {
			t.Fatal(err)
		}
	}
	// A leftover of the per-file writer is removed with the old set.
	if err := os.WriteFile(filepath.Join(dir, ".report.md.tmp-123"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	small := passingRun()
	if err := WriteAll(dir, small); err != nil {
		t.Fatalf("second WriteAll: %v", err)
	}
	for _, name := range reportdir.Files {
		now, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(now, rendered(t, name, small)) {
			t.Errorf("%s is not exactly the new report (%d bytes)", name, len(now))
		}
		old, err := os.ReadFile(filepath.Join(keep, name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(old, rendered(t, name, big)) {
			t.Errorf("the old %s was rewritten in place, not replaced", name)
		}
	}
	if got := entries(t, dir); strings.Join(got, " ") != strings.Join(sortedFiles(), " ") {
		t.Errorf("dir holds %v, want exactly the four reports", got)
	}
	if got := entries(t, top); strings.Join(got, " ") != "out" {
		t.Errorf("beside dir: %v, want only out", got)
	}
}

// TestWriteAllAtTheSwapShowsTheOldSet stops a write at its most exposed
// point: every report of the new set is on disk, and dir still holds the
// old set whole.
func TestWriteAllAtTheSwapShowsTheOldSet(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	old, next := sampleRun(), passingRun()
	if err := WriteAll(dir, old); err != nil {
		t.Fatal(err)
	}
	called := false
	reportdir.BeforeSwap = func() {
		called = true
		for _, name := range reportdir.Files {
			got, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil || !bytes.Equal(got, rendered(t, name, old)) {
				t.Errorf("at the swap, %s is not the old report (%v)", name, err)
			}
		}
	}
	defer func() { reportdir.BeforeSwap = func() {} }()
	if err := WriteAll(dir, next); err != nil {
		t.Fatal(err)
	}
	if !called {
		t.Fatal("the swap hook never ran")
	}
}

// TestWriteAllKilledMidWrite kills a child process at the swap with
// SIGKILL: dir keeps the old set, and the next write removes what the
// dead one left beside it.
func TestWriteAllKilledMidWrite(t *testing.T) {
	if os.Getenv("REPORTS_KILL_AT_SWAP") != "" {
		reportdir.BeforeSwap = func() { syscall.Kill(os.Getpid(), syscall.SIGKILL) }
		WriteAll(os.Getenv("REPORTS_KILL_AT_SWAP"), passingRun())
		os.Exit(3) // not reached
	}
	top := t.TempDir()
	dir := filepath.Join(top, "out")
	old := sampleRun()
	if err := WriteAll(dir, old); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestWriteAllKilledMidWrite$")
	cmd.Env = append(os.Environ(), "REPORTS_KILL_AT_SWAP="+dir)
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ProcessState.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("the child was not killed at the swap: %v", err)
	}
	for _, name := range reportdir.Files {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || !bytes.Equal(got, rendered(t, name, old)) {
			t.Errorf("after the kill, %s is not the old report (%v)", name, err)
		}
	}
	if got := entries(t, top); len(got) != 2 {
		t.Fatalf("beside dir: %v, want out and the dead write's directory", got)
	}
	if err := WriteAll(dir, passingRun()); err != nil {
		t.Fatal(err)
	}
	if got := entries(t, top); strings.Join(got, " ") != "out" {
		t.Errorf("the next write left %v beside dir, want only out", got)
	}
}

func TestWritersRefuseNilRun(t *testing.T) {
	for name, w := range writers {
		if err := w(io.Discard, nil); err == nil {
			t.Errorf("%s writer accepted a nil run", name)
		}
	}
	if err := WriteAll(t.TempDir(), nil); err == nil {
		t.Error("WriteAll accepted a nil run")
	}
}

// failWriter fails every write.
type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, os.ErrClosed }

func TestWritersReportWriteErrors(t *testing.T) {
	for name, w := range writers {
		if err := w(failWriter{}, sampleRun()); err == nil {
			t.Errorf("%s writer swallowed a write error", name)
		}
	}
}

func TestTheLargestSeedIsPrintedRight(t *testing.T) {
	run := sampleRun()
	run.Seed = 1<<64 - 1
	for _, name := range reportdir.Files {
		if got := string(rendered(t, name, run)); !strings.Contains(got, "18446744073709551615") {
			t.Errorf("%s does not show seed 2^64-1", name)
		}
	}
}
