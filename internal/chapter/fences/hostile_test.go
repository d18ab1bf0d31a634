//go:build linux

package fences_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/conform-spi/conform/internal/chapter/fences"
	"github.com/conform-spi/conform/internal/spec"
)

// envMark is set, to a value of the test's own, in the environment of
// every helper a hostile test starts; the helper's children inherit it,
// so that the test can find every process of the run in /proc.
const envMark = "CONFORM_TEST_HOSTILE_MARK"

// hostileRowBound is the row bound of the hostile runs: the chapter's
// default, the bound docs/fences.md gives.
const hostileRowBound = time.Minute

// runHostile runs the try row with the hostile helper script of testdata,
// and returns the row's result, how long the run took, and the mark its
// processes carry.
func runHostile(t *testing.T, script string) (*spec.Result, time.Duration, string) {
	t.Helper()
	path, err := filepath.Abs(filepath.Join("testdata", script))
	if err != nil {
		t.Fatal(err)
	}
	mark := newMark(t)
	t.Cleanup(func() { killMarked(mark) })
	cfg := fences.Config{Command: []string{"/bin/sh", path}, Env: []string{envMark + "=" + mark}, RowTimeout: hostileRowBound, TempDir: t.TempDir()}
	tree := spec.NewTree()
	fences.Register(tree, cfg)
	match, err := spec.ParseFilter(fences.RowLabelPrefix + "try")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	rep := spec.Run(context.Background(), tree, spec.Config{Filter: match})
	took := time.Since(start)
	for _, r := range rep.Specs {
		if r.Ran && r.Node == "" {
			return r, took, mark
		}
	}
	t.Fatalf("the try row did not run: %+v", rep.Specs)
	return nil, 0, ""
}

func newMark(t *testing.T) string {
	t.Helper()
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// marked returns the pids of the processes whose environment holds mark.
func marked(mark string) []int {
	want := []byte(envMark + "=" + mark + "\x00")
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err == nil && bytes.Contains(env, want) && !zombie(pid) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// zombie reports whether pid has ended and waits to be reaped.
func zombie(pid int) bool {
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return true
	}
	rest := string(stat[bytes.LastIndexByte(stat, ')')+1:])
	return strings.HasPrefix(strings.TrimSpace(rest), "Z")
}

// killMarked kills what a failed test left behind, so that it leaks
// nothing either.
func killMarked(mark string) {
	for _, pid := range marked(mark) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

// settled returns the marked processes once none is left, or those left
// after a second: a killed process leaves /proc a moment after its kill.
func settled(mark string) []int {
	deadline := time.Now().Add(time.Second)
	for {
		left := marked(mark)
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestHelperClosesStdout drives a helper that closes its stdout after its
// ready line and runs on: the row fails at once, well within its bound,
// naming the breach, and the helper is gone after the run.
func TestHelperClosesStdout(t *testing.T) {
	res, took, mark := runHostile(t, "closes-stdout.sh")
	if res.State != spec.Failed {
		t.Errorf("the row ended %s after %s, want failed\n%s", res.State, took, res.Message)
	}
	if took > 10*time.Second {
		t.Errorf("the row took %s, want a few seconds (its bound is %s)", took, hostileRowBound)
	}
	if !strings.Contains(res.Message, "protocol breach: the helper closed its stdout and still ran") {
		t.Errorf("the failure does not say what the helper did:\n%s", res.Message)
	}
	if left := settled(mark); len(left) > 0 {
		t.Errorf("processes of the helper left after the run: %v", left)
	}
}

// TestHelperChildrenDoNotOutliveTheRow drives a helper that starts two
// children holding none of its pipes: after the row, no process of the
// helper is left, its children included. Before the run there is none.
func TestHelperChildrenDoNotOutliveTheRow(t *testing.T) {
	res, _, mark := runHostile(t, "leaves-children.sh")
	if res.State != spec.Failed || !strings.Contains(res.Message, "error this helper serves nothing") {
		t.Errorf("the row ended %s, want failed on the helper's answer\n%s", res.State, res.Message)
	}
	if left := settled(mark); len(left) > 0 {
		t.Errorf("%d processes of the helper left after the run (pids %v)", len(left), left)
	}
}

// TestHelperLongLine drives a helper that answers with a line of 1 MiB:
// the row fails naming the breach, not a missing answer.
func TestHelperLongLine(t *testing.T) {
	res, took, mark := runHostile(t, "long-line.sh")
	if res.State != spec.Failed || !strings.Contains(res.Message, "protocol breach: the helper wrote a line longer than") {
		t.Errorf("the row ended %s after %s, want failed on the long line\n%s", res.State, took, res.Message)
	}
	if left := settled(mark); len(left) > 0 {
		t.Errorf("processes of the helper left after the run: %v", left)
	}
}
