package main_test

import (
	"bufio"
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/conform-spi/conform/internal/engine"
	"github.com/conform-spi/conform/reports"
)

// The rule these tests hold the command to: a run is complete once its
// last row (and the cleanups after it) ended before any SIGINT or
// SIGTERM. A signal before that interrupts it, and every output says so:
// exit 1, "INTERRUPTED, NO VERDICT" on stdout, "interrupted" on stderr,
// and the four reports marked interrupted. A signal after it changes no
// output: the exit code is the verdict's and no output says interrupted.

// envInterruptMark marks the environment of a run, so that the test can
// find any process of it (a helper, a helper's child) left after it.
const envInterruptMark = "CONFORM_TEST_INTERRUPT_MARK"

// envTestHold is engine.EnvTestHold, which only the conformcanary build
// of the engine has.
const envTestHold = "CONFORM_TEST_HOLD"

// heldRun is what a run signalled at a moment gave.
type heldRun struct {
	code           int
	stdout, stderr string
}

// signalAt runs the command with args, holds it at moment (see
// engine.EnvTestHold), sends it SIGINT there, lets it go on, and returns
// how it ended.
func signalAt(t *testing.T, moment string, args ...string) heldRun {
	t.Helper()
	reachedR, reachedW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	releaseR, releaseW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer reachedR.Close()
	defer releaseW.Close()
	cmd := exec.Command(binary, args...)
	cmd.Dir = t.TempDir()
	cmd.Env = append(withoutConformEnv(), envTestHold+"="+moment+",3,4")
	cmd.ExtraFiles = []*os.File{reachedW, releaseR}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	reachedW.Close()
	releaseR.Close()
	if line, err := bufio.NewReader(reachedR).ReadString('\n'); line != "reached\n" {
		cmd.Wait()
		t.Fatalf("the command did not stop at %s (%q, %v)\n%s\n%s", moment, line, err, out.String(), errb.String())
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	waitTaken(t, cmd.Process.Pid)
	// A command the signal killed reads no more: its write fails, and its
	// end says why.
	_, _ = releaseW.WriteString("after-signal\n")
	return heldRun{exitCode(t, cmd.Wait()), out.String(), errb.String()}
}

// waitTaken waits until the SIGINT sent to pid is no longer pending on it
// or on any of its threads: the signal was taken, by a handler or by its
// death, before the command is let go.
func waitTaken(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for pending(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("the SIGINT is still pending on %d after 10s", pid)
		}
		time.Sleep(time.Millisecond)
	}
}

// pending reports whether SIGINT is pending on pid or a thread of it.
func pending(pid int) bool {
	tasks, _ := filepath.Glob(filepath.Join("/proc", strconv.Itoa(pid), "task", "*", "status"))
	for _, f := range append(tasks, filepath.Join("/proc", strconv.Itoa(pid), "status")) {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			k, v, ok := strings.Cut(line, ":")
			if !ok || (k != "SigPnd" && k != "ShdPnd") {
				continue
			}
			mask, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			if err == nil && mask&(1<<(uint(syscall.SIGINT)-1)) != 0 {
				return true
			}
		}
	}
	return false
}

func exitCode(t *testing.T, err error) int {
	t.Helper()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee) && ee.Exited():
		return ee.ExitCode()
	}
	t.Fatalf("the command did not exit with a code: %v", err)
	return -1
}

// junitProps returns every value of the property name in junit.xml,
// across its testsuites.
func junitProps(t *testing.T, raw []byte, name string) []string {
	t.Helper()
	var vals []string
	d := xml.NewDecoder(bytes.NewReader(raw))
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return vals
		}
		if err != nil {
			t.Fatalf("junit.xml does not parse: %v", err)
		}
		se, ok := tok.(xml.StartElement)
		if !ok || se.Name.Local != "property" {
			continue
		}
		var n, v string
		for _, a := range se.Attr {
			switch a.Name.Local {
			case "name":
				n = a.Value
			case "value":
				v = a.Value
			}
		}
		if n == name {
			vals = append(vals, v)
		}
	}
}

// checkOneStory checks that the exit code, stdout, stderr and the four
// reports in dir all tell one story: interrupted, or complete with the
// verdict report.json gives.
// A complete run signalled before it read its signals (late) says so on
// stderr.
func checkOneStory(t *testing.T, dir string, r heldRun, interrupted, late bool) {
	t.Helper()
	run, err := engine.ReadReport(dir)
	if err != nil {
		t.Fatalf("report.json: %v\n%s\n%s", err, r.stdout, r.stderr)
	}
	v := run.Verdict()
	if run.Interrupted != interrupted || (v == reports.VerdictInterrupted) != interrupted {
		t.Errorf("report.json: interrupted %v, verdict %s; want interrupted %v", run.Interrupted, v, interrupted)
	}
	wantCode := 1
	if v.Passing() {
		wantCode = 0
	}
	if r.code != wantCode {
		t.Errorf("exit %d, want %d for verdict %s\nstdout:\n%s\nstderr:\n%s", r.code, wantCode, v, r.stdout, r.stderr)
	}
	checkVerdictEverywhere(t, dir, string(v), v.Label())
	raw, err := os.ReadFile(filepath.Join(dir, "junit.xml"))
	if err != nil {
		t.Fatal(err)
	}
	props := junitProps(t, raw, "interrupted")
	if len(props) == 0 {
		t.Error("junit.xml has no interrupted property")
	}
	for _, p := range props {
		if p != strconv.FormatBool(interrupted) {
			t.Errorf("junit.xml: interrupted %s, want %v", p, interrupted)
		}
	}
	md, err := os.ReadFile(filepath.Join(dir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	if got := bytes.Contains(md, []byte("The run was interrupted")); got != interrupted {
		t.Errorf("report.md says the run was interrupted: %v, want %v", got, interrupted)
	}
	if !strings.Contains(r.stdout, "\n"+strings.ToUpper(v.Label())+": ") {
		t.Errorf("stdout does not head its summary with %q:\n%s", strings.ToUpper(v.Label()), r.stdout)
	}
	if got := strings.Contains(r.stdout, "INTERRUPTED"); got != interrupted {
		t.Errorf("stdout says INTERRUPTED: %v, want %v\n%s", got, interrupted, r.stdout)
	}
	if got := strings.Contains(r.stderr, "interrupted"); got != interrupted {
		t.Errorf("stderr says interrupted: %v, want %v\n%s", got, interrupted, r.stderr)
	}
	if got := strings.Contains(r.stderr, "a signal came after the last row had ended"); got != late {
		t.Errorf("stderr says a signal came after the last row: %v, want %v\n%s", got, late, r.stderr)
	}
}

// TestInterruptOneStory signals `conform run` at each moment the command
// can be held at: before the first row it is interrupted everywhere; after
// the last row, before the report write, and after the write just before
// exit, it is complete everywhere, with the verdict's exit code (and not
// a death by the signal).
func TestInterruptOneStory(t *testing.T) {
	for _, c := range []struct {
		moment            string
		interrupted, late bool
	}{
		{"rows-start", true, false},
		{"rows-end", false, true},
		{"report-write", false, true},
		{"exit", false, false},
	} {
		t.Run(c.moment, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "reports")
			r := signalAt(t, c.moment, "run", "--rows", "acquire-empty", "--report-dir", dir)
			checkOneStory(t, dir, r, c.interrupted, c.late)
			if c.interrupted {
				run, _ := engine.ReadReport(dir)
				if c := run.Counts(); c[reports.StatusPassed] != 0 || c[reports.StatusNotRun] == 0 {
					t.Errorf("rows %v: want none passed, the selected row not run", c)
				}
			}
		})
	}
}

// TestInterruptMidRow signals `conform fences` while its first row waits
// on a helper that started and never says it is ready: the run is
// interrupted everywhere, and no process of it is left.
func TestInterruptMidRow(t *testing.T) {
	script, err := filepath.Abs(filepath.Join("testdata", "helper-started.sh"))
	if err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(t.TempDir(), "started")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	mark := strconv.Itoa(os.Getpid()) + "-" + filepath.Base(t.TempDir())
	dir := filepath.Join(t.TempDir(), "reports")
	cmd := exec.Command(binary, "fences", "--fences", "exec:/bin/sh "+script+" "+fifo, "--rows", "adm-try", "--timeout", "30s", "--report-dir", dir)
	cmd.Dir = t.TempDir()
	cmd.Env = append(withoutConformEnv(), envInterruptMark+"="+mark)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, pid := range markedBy(mark) {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	f, err := os.Open(fifo) // until the helper opens it to write
	if err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(f).ReadString('\n')
	f.Close()
	if line != "started\n" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("the helper did not say it started (%q, %v)\n%s\n%s", line, err, out.String(), errb.String())
	}
	if n := len(markedBy(mark)); n < 2 {
		t.Fatalf("%d processes of the run while it runs, want the command and its helper", n)
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	r := heldRun{exitCode(t, cmd.Wait()), out.String(), errb.String()}
	checkOneStory(t, dir, r, true, false)
	if left := markedBy(mark); len(left) > 0 {
		t.Errorf("processes of the run left after it: %v", left)
	}
}

// markedBy returns the pids of the live processes whose environment
// holds envInterruptMark=mark.
func markedBy(mark string) []int {
	want := []byte(envInterruptMark + "=" + mark + "\x00")
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil || !bytes.Contains(env, want) {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		if rest := stat[bytes.LastIndexByte(stat, ')')+1:]; bytes.HasPrefix(bytes.TrimSpace(rest), []byte("Z")) {
			continue
		}
		pids = append(pids, pid)
	}
	return pids
}
