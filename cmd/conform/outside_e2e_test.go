//go:build unix

package main_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// What conform reads from outside (a shard's report, a ledger) is kept
// in testdata/shards when it is a file, and made here when it cannot be
// (a link to a device, a named pipe, a sparse file).

// boundedRun runs the command with args in dir and kills it at within:
// a command still running then has blocked, and fails the test. It
// returns the result and the peak resident memory of the process, in
// bytes (0 where the system does not say).
func boundedRun(t *testing.T, dir string, within time.Duration, args ...string) (result, int64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Dir = dir
	cmd.Env = withoutConformEnv()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("conform %v still ran after %s: it blocked", args, within)
	}
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("running conform %v: %v", args, err)
	}
	var rss int64
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok && runtime.GOOS == "linux" {
		rss = ru.Maxrss << 10 // kilobytes on Linux
	}
	return result{code, out.String(), errb.String()}, rss
}

// maxRefusalRSS bounds the peak memory of a command that refuses what it
// was given to read: far below what reading it would take.
const maxRefusalRSS = 100 << 20

// hostileReports returns report paths that are no regular file of a
// bounded size, by name: a link to /dev/zero, a named pipe with no
// writer, and a sparse file of 10 GiB. Each is the report.json of its
// own directory.
func hostileReports(t *testing.T) map[string]string {
	t.Helper()
	root := t.TempDir()
	out := map[string]string{}
	mk := func(name string, make func(path string) error) {
		dir := filepath.Join(root, strings.NewReplacer("/", "-", " ", "-").Replace(name))
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := make(filepath.Join(dir, "report.json")); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out[name] = dir
	}
	mk("link to /dev/zero", func(p string) error { return os.Symlink("/dev/zero", p) })
	mk("named pipe", func(p string) error { return syscall.Mkfifo(p, 0o644) })
	mk("sparse 10 GiB", func(p string) error {
		f, err := os.Create(p)
		if err != nil {
			return err
		}
		return errors.Join(f.Truncate(10<<30), f.Close())
	})
	return out
}

// TestMergeRefusesReportsThatAreNotBoundedFiles: merge and explore
// --replay refuse, with exit 2 and one line saying why, a report.json
// that links to /dev/zero (which once grew merge to 6 GB), a named pipe
// (which once blocked it for good) and a sparse file of 10 GiB, each
// within seconds and a bounded memory, as a directory or as the file.
func TestMergeRefusesReportsThatAreNotBoundedFiles(t *testing.T) {
	why := map[string]string{"link to /dev/zero": "not a regular file", "named pipe": "named pipe", "sparse 10 GiB": "more than the 512 MiB"}
	for name, dir := range hostileReports(t) {
		t.Run(strings.NewReplacer("/", "-", " ", "-").Replace(name), func(t *testing.T) { refusedAtOnce(t, name, dir, why[name]) })
	}
}

// refusedAtOnce checks that merge and explore --replay refuse the
// report in dir, named name, saying why.
func refusedAtOnce(t *testing.T, name, dir, why string) {
	for _, args := range [][]string{
		{"merge", dir, "--report-dir", filepath.Join(t.TempDir(), "merged")},
		{"merge", filepath.Join(dir, "report.json"), "--report-dir", filepath.Join(t.TempDir(), "merged")},
		{"explore", "--histories", "1", "--replay", dir, "--report-dir", filepath.Join(t.TempDir(), "out")},
	} {
		start := time.Now()
		r, rss := boundedRun(t, t.TempDir(), 20*time.Second, args...)
		if r.code != 2 || !strings.Contains(r.stderr, why) || strings.Count(r.stderr, "\n") != 1 {
			t.Errorf("%s: conform %s: exit %d, want 2 and one line saying %q:\n%s", name, args[0], r.code, why, r.stderr)
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("%s: conform %s took %s to refuse it", name, args[0], d)
		}
		t.Logf("%s: conform %s refused it in %s, peak memory %d KiB", name, args[0], time.Since(start).Round(time.Millisecond), rss>>10)
		if rss > maxRefusalRSS {
			t.Errorf("%s: conform %s peaked at %d MiB of memory, want at most %d", name, args[0], rss>>20, maxRefusalRSS>>20)
		}
	}
}

// shardFixtures returns the report files of fixture case name under
// testdata/shards, in shard order.
func shardFixtures(t *testing.T, name string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "shards", name, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixture %s: %v", name, err)
	}
	for i, f := range files {
		if files[i], err = filepath.Abs(f); err != nil {
			t.Fatal(err)
		}
	}
	return files
}

// TestMergeChecksTheShardsNumbers: shards whose numbers or statuses are
// none conform writes (a negative count, budget or duration, sums that
// overflow, a row status or verdict it does not know) are refused with
// exit 2 and one line naming the file and the field, and write nothing.
// Three shards whose exploration row has an unknown status once merged
// to conformant. The same shards with sound numbers merge to conformant.
func TestMergeChecksTheShardsNumbers(t *testing.T) {
	merged := filepath.Join(t.TempDir(), "merged")
	if r := conform(t, append(append([]string{"merge"}, shardFixtures(t, "good")...), "--report-dir", merged)...); r.code != 0 || !strings.Contains(r.stdout, "CONFORMANT") {
		t.Fatalf("merging the sound fixture: exit %d, want 0\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, c := range []struct{ name, file, field string }{
		{"unknown-status", "0.json", `rows[0].status "bogus" is not a status conform writes`},
		{"unknown-verdict", "1.json", `verdict "certified-by-me"`},
		{"negative-played", "1.json", "explore.played -5 is negative"},
		{"negative-coverage", "1.json", "explore.coverage[\"acquire/exclusive\"] -7 is negative"},
		{"negative-budget", "0.json", "explore.histories -30 is outside"},
		{"negative-row-duration", "0.json", "rows[0].duration_ns -1 is negative"},
		{"overflow-ops", "1.json", "explore.ops: the shards' sum overflows"},
		{"overflow-coverage", "1.json", "explore.coverage[\"acquire/takeover\"]: the shards' sum overflows"},
	} {
		out := filepath.Join(t.TempDir(), "merged")
		r := conform(t, append(append([]string{"merge"}, shardFixtures(t, c.name)...), "--report-dir", out)...)
		file := filepath.Join(c.name, c.file)
		if r.code != 2 || !strings.Contains(r.stderr, file) || !strings.Contains(r.stderr, c.field) || strings.Count(r.stderr, "\n") != 1 {
			t.Errorf("merge %s: exit %d, want 2 and one line naming %s and %q:\n%s%s", c.name, r.code, file, c.field, r.stdout, r.stderr)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("merge %s wrote reports though it refused", c.name)
		}
	}
}

// TestMergeShowsAShardsTextEscaped: a shard's store that clears the
// screen, sets the terminal's title and reverses the text reaches the
// console escaped, never as itself.
func TestMergeShowsAShardsTextEscaped(t *testing.T) {
	r := conform(t, append(append([]string{"merge"}, shardFixtures(t, "escape-store")...), "--report-dir", filepath.Join(t.TempDir(), "merged"))...)
	if r.code != 0 {
		t.Fatalf("exit %d, want 0\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, raw := range []string{"\x1b", "\x07", "\r", "\u202e"} {
		if strings.Contains(r.stdout+r.stderr, raw) {
			t.Errorf("the console shows %q raw:\n%q", raw, r.stdout)
		}
	}
	if !strings.Contains(r.stdout, `evil:\x1b[2J\x1b]0;owned\x07\u202eevil\r`) {
		t.Errorf("the console does not show the store escaped:\n%s", r.stdout)
	}
}

// TestMergeOfOneShardOfManyIsOneShortLine: one shard of a campaign of
// 10,000 is refused in one line that names a few of the shards missing
// and counts the others.
func TestMergeOfOneShardOfManyIsOneShortLine(t *testing.T) {
	r := conform(t, append(append([]string{"merge"}, shardFixtures(t, "one-of-many")...), "--report-dir", filepath.Join(t.TempDir(), "merged"))...)
	if r.code != 2 || strings.Count(r.stderr, "\n") != 1 || len(r.stderr) > 600 || !strings.Contains(r.stderr, "1/10000, 2/10000") || !strings.Contains(r.stderr, "and 9989 more missing") {
		t.Errorf("exit %d, want 2 and one short line naming some shards missing and counting the rest (%d bytes):\n%.2000s", r.code, len(r.stderr), r.stderr)
	}
}

// TestEmptyReportDirIsRefused: an empty --report-dir names no directory; every
// command that writes reports refuses it in one line, with exit 2, and
// writes nothing (it once wrote ./conform-report).
func TestEmptyReportDirIsRefused(t *testing.T) {
	good := shardFixtures(t, "good")
	for _, args := range [][]string{
		{"run", "--rows", "kill", "--explore-histories", "0", "--report-dir", ""},
		{"explore", "--histories", "1", "--report-dir", ""},
		{"merge", good[0], good[1], good[2], "--report-dir", ""},
		{"fences", "--rows", "adm-realm-ids", "--report-dir", ""},
		{"reproduce", "v1;seed=1;row=kill", "--report-dir", ""},
	} {
		dir := t.TempDir()
		r := conformIn(t, dir, args...)
		if r.code != 2 || !strings.Contains(r.stderr, `--report-dir ""`) || strings.Count(r.stderr, "\n") != 1 {
			t.Errorf("conform %q: exit %d, want 2 and one line naming --report-dir:\n%s", args, r.code, r.stderr)
		}
		if es, _ := os.ReadDir(dir); len(es) > 0 {
			t.Errorf("conform %q left %s behind", args, es[0].Name())
		}
	}
}

// TestUnknownCommandIsOneLine: an unknown command is refused with exit
// 2 and one line that names it and points to 'conform help'.
func TestUnknownCommandIsOneLine(t *testing.T) {
	r := conform(t, "frobnicate\x1b[2J")
	if r.code != 2 || r.stdout != "" || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, "conform help") || !strings.Contains(r.stderr, `frobnicate\x1b[2J`) {
		t.Errorf("exit %d, want 2 and one line naming the command and 'conform help':\n%s%s", r.code, r.stdout, r.stderr)
	}
}
