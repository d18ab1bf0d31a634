//go:build linux

package admission_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/conform-spi/conform/admission"
)

func runHostsFences(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = admission.HostsFencesMain(args, &out, &errb)
	return code, out.String(), errb.String()
}

// tmpfsDir is /dev/shm when it is a tmpfs, else a tmpfs mounted for the test
// (root only).
func tmpfsDir(t *testing.T) string {
	t.Helper()
	if mountType(t, "/dev/shm") == "tmpfs" {
		return "/dev/shm"
	}
	if os.Geteuid() != 0 {
		t.Skip("/dev/shm is not a tmpfs and mounting one needs root")
	}
	dir := t.TempDir()
	if err := unix.Mount("tmpfs", dir, "tmpfs", 0, "size=1m"); err != nil {
		t.Fatalf("mount a tmpfs: %v", err)
	}
	t.Cleanup(func() {
		if err := unix.Unmount(dir, 0); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	return dir
}

func TestHostsFencesOnTmpfs(t *testing.T) {
	dir := tmpfsDir(t)
	code, out, errs := runHostsFences(dir)
	if want := dir + "\thosts fences\ttmpfs (0x1021994)\n"; code != 0 || out != want || errs != "" {
		t.Errorf("hosts-fences %s = %d, %q, %q; want 0, %q", dir, code, out, errs, want)
	}
}

func TestHostsFencesOnProc(t *testing.T) {
	code, out, errs := runHostsFences("/proc")
	if want := "/proc\thosts no fence\tproc (0x9fa0)\n"; code != 1 || out != want || errs != "" {
		t.Errorf("hosts-fences /proc = %d, %q, %q; want 1, %q", code, out, errs, want)
	}
}

func TestHostsFencesOnTheWorkTree(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	typ := mountType(t, wd)
	want := 1
	if nativeFlock[typ] {
		want = 0
	}
	code, out, errs := runHostsFences(wd)
	if code != want || !strings.HasPrefix(out, wd+"\t") || errs != "" {
		t.Errorf("hosts-fences %s (mountinfo: %s) = %d, %q, %q; want exit %d", wd, typ, code, out, errs, want)
	}
	t.Logf("work tree on %s: %s", typ, strings.TrimSpace(out))
}

func TestHostsFencesExitCodes(t *testing.T) {
	tmp := tmpfsDir(t)
	missing := filepath.Join(t.TempDir(), "missing")
	file := filepath.Join(t.TempDir(), "file")
	must(t, os.WriteFile(file, nil, 0o600))
	cases := []struct {
		args     []string
		code     int
		outLines int
	}{
		{nil, 2, 0},
		{[]string{"-v", tmp}, 2, 0},
		{[]string{missing}, 2, 0},
		{[]string{file}, 2, 0},
		{[]string{tmp, "/proc"}, 1, 2},
		{[]string{"/proc", tmp}, 1, 2},
		{[]string{tmp, tmp}, 0, 2},
		{[]string{"/proc", missing, tmp}, 2, 2},
		{[]string{missing, "/proc"}, 2, 1},
		{[]string{"--", tmp}, 0, 1},
	}
	for _, c := range cases {
		code, out, errs := runHostsFences(c.args...)
		lines := strings.Count(out, "\n")
		if code != c.code || lines != c.outLines {
			t.Errorf("hosts-fences %q = %d with %d lines (%q, stderr %q); want %d with %d", c.args, code, lines, out, errs, c.code, c.outLines)
		}
		if code == 2 && errs == "" {
			t.Errorf("hosts-fences %q exits 2 without saying why on stderr", c.args)
		}
	}
}

// TestHostsFencesEscapesNames keeps a directory name from forging lines:
// a name with a newline, tabs and an escape sequence prints as one line.
func TestHostsFencesEscapesNames(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "x\nfake\thosts fences\ttmpfs\x1b[2J")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	_, out, _ := runHostsFences(dir)
	if n := strings.Count(out, "\n"); n != 1 {
		t.Fatalf("one directory printed %d lines: %q", n, out)
	}
	if strings.Count(out, "\t") != 2 || strings.ContainsRune(out, 0x1b) {
		t.Errorf("the name was not escaped: %q", out)
	}
	if !strings.Contains(out, `x\nfake\thosts fences\ttmpfs\x1b[2J`) {
		t.Errorf("the escaped name is not shown: %q", out)
	}
	_, _, errOut := runHostsFences(dir + "\nmissing")
	if strings.Count(errOut, "\n") != 1 {
		t.Errorf("an error for a bad name printed %q, want one line", errOut)
	}
}
