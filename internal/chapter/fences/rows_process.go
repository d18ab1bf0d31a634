//go:build linux

package fences

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/conform-spi/conform/internal/spec"

	"github.com/conform-spi/conform/admission"
)

// The process rows: a fence is released with its holder's process, and
// only its holder's, since no child inherits its descriptor.

func rowSigkill(r *rowRun) {
	for _, take := range []string{"guard-try", "hold-try"} {
		d := r.dir()
		w, b := r.start("W", procOpts{}), r.start("B", procOpts{})
		w.expect(ObExclusion, "guard-try "+d, held, "a writer creates the fence")
		w.expect(ObExclusion, "release", released, "the writer lets go")
		a := r.start("A", procOpts{})
		a.expect(ObExclusion, take+" "+d, held, "the holder that will be killed")
		b.expect(ObExclusion, "guard-try "+d, inProgress, "a guard while the holder lives")
		a.kill()
		expectKilled(a)
		b.expect(ObRelease, "guard-try "+d, held, "a guard that does not wait, right after the holder ("+take+") was killed")
	}
}

func rowCloexec(r *rowRun) {
	d := r.dir()
	fence, err := filepath.EvalSymlinks(d)
	r.setup(err, "resolve the row directory")
	fence = filepath.Join(fence, admission.FenceFile)
	// The children read their commands from this pipe, so they outlive
	// their parent until the row closes it.
	rd, wr, err := os.Pipe()
	r.setup(err, "make the linger pipe")
	a := r.start("A", procOpts{linger: rd})
	r.sp.DeferErr(wr.Close)
	r.setup(rd.Close(), "close the linger pipe's read end")
	b := r.start("B", procOpts{})

	a.expect(ObExclusion, "guard-try "+d, held, "the parent's guard")
	first := spawn(a, fence)
	b.expect(ObExclusion, "guard-try "+d, inProgress, "the parent still holds")
	a.expect(ObExclusion, "release", released, "the parent lets go")
	b.expect(ObRelease, "guard-try "+d, held, "a guard once the parent let go, its child still running")
	r.equal(ObRelease, alive(r, first), true, "the first child runs on")
	b.expect(ObExclusion, "release", released, "B lets go")

	a.expect(ObExclusion, "guard-try "+d, held, "the parent's second guard")
	second := spawn(a, fence)
	a.kill() // lets go without unlocking: only its descriptor held the lock
	b.expect(ObRelease, "guard-try "+d, held, "a guard once the parent died, its children still running")
	r.equal(ObRelease, alive(r, first), true, "the first child runs on")
	r.equal(ObRelease, alive(r, second), true, "the second child runs on")
}

// spawn has p start a lingering child while it holds fence, and checks that
// the child has no descriptor of it.
func spawn(p *proc, fence string) int {
	spec.Helper()
	line := p.do(ObRelease, "spawn-linger")
	pid, err := strconv.Atoi(strings.TrimPrefix(line, "spawned "))
	p.r.check(ObRelease, strings.HasPrefix(line, "spawned ") && err == nil, "helper "+p.name+" spawns a child", "spawned PID", line)
	files := openFiles(p.r, pid)
	for _, f := range files {
		p.r.check(ObRelease, f != fence, "the child of "+p.name+" inherited a descriptor of the fence", "no descriptor of "+fence, files)
	}
	return pid
}

// openFiles lists what pid's descriptors name, from /proc.
func openFiles(r *rowRun, pid int) []string {
	spec.Helper()
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	entries, err := os.ReadDir(dir)
	r.setup(err, "list the child's descriptors")
	var names []string
	for _, e := range entries {
		target, err := os.Readlink(filepath.Join(dir, e.Name()))
		if errors.Is(err, os.ErrNotExist) {
			continue // closed since the listing
		}
		r.setup(err, "read the child's descriptor")
		names = append(names, target)
	}
	return names
}

// alive reports whether pid runs and is not a zombie.
func alive(r *rowRun, pid int) bool {
	spec.Helper()
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if errors.Is(err, os.ErrNotExist) {
		return false
	}
	r.setup(err, "read the child's state")
	// The state follows the command name, which is in parentheses.
	rest := string(stat[strings.LastIndexByte(string(stat), ')')+1:])
	return !strings.HasPrefix(strings.TrimSpace(rest), "Z")
}

// expectKilled asserts that p ended by SIGKILL.
func expectKilled(p *proc) {
	spec.Helper()
	var ee *exec.ExitError
	ok := errors.As(p.waitErr, &ee)
	if ok {
		status, isStatus := ee.Sys().(syscall.WaitStatus)
		ok = isStatus && status.Signaled() && status.Signal() == syscall.SIGKILL
	}
	if !ok {
		spec.Fail(fmt.Sprintf("[setup] helper %s ended with %v; want SIGKILL", p.name, p.waitErr))
	}
}
