package reports

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
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
	f := append([]string(nil), Files...)
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
		t.Fatalf("dir holds %v, want exactly %v", got, Files)
	}
	for _, name := range Files {
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
	if want := filepath.Join(dir, "junit.xml"); !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not name %s", err, want)
	}
	if got := entries(t, filepath.Dir(file)); len(got) != 1 {
		t.Errorf("WriteAll left %v next to the file", got)
	}
}

func TestWriteAllOneFileFailsOthersWritten(t *testing.T) {
	dir := t.TempDir()
	// A non-empty directory where report.md should go: the rename fails.
	if err := os.MkdirAll(filepath.Join(dir, "report.md", "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	err := WriteAll(dir, sampleRun())
	if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "report.md")) {
		t.Fatalf("WriteAll = %v, want an error naming report.md", err)
	}
	for _, other := range []string{"junit.xml", "report.json", "report.html"} {
		if strings.Contains(err.Error(), other) {
			t.Errorf("error %q names %s, which was written", err, other)
		}
		if _, statErr := os.Stat(filepath.Join(dir, other)); statErr != nil {
			t.Errorf("%s was not written: %v", other, statErr)
		}
	}
	if got := entries(t, dir); strings.Join(got, " ") != strings.Join(sortedFiles(), " ") {
		t.Errorf("dir holds %v: a temporary file survived", got)
	}
}

func TestWriteAllReplacesWhole(t *testing.T) {
	dir := t.TempDir()
	big := sampleRun()
	big.Rows[2].Output = strings.Repeat("long log line\n", 1<<16) // a report.json far longer than the next
	if err := WriteAll(dir, big); err != nil {
		t.Fatalf("first WriteAll: %v", err)
	}
	// Hard links keep the old files' inodes: a rename leaves them whole, an
	// in-place rewrite would change them.
	for _, name := range Files {
		if err := os.Link(filepath.Join(dir, name), filepath.Join(dir, "old-"+name)); err != nil {
			t.Fatal(err)
		}
	}
	small := passingRun()
	if err := WriteAll(dir, small); err != nil {
		t.Fatalf("second WriteAll: %v", err)
	}
	for _, name := range Files {
		now, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(now, rendered(t, name, small)) {
			t.Errorf("%s is not exactly the new report (%d bytes)", name, len(now))
		}
		old, err := os.ReadFile(filepath.Join(dir, "old-"+name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(old, rendered(t, name, big)) {
			t.Errorf("the old %s was rewritten in place, not replaced", name)
		}
	}
	if got := len(entries(t, dir)); got != 2*len(Files) {
		t.Errorf("dir holds %d entries, want %d: a temporary file survived", got, 2*len(Files))
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
