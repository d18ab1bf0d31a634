//go:build linux

package fences

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"

	"github.com/conform-spi/conform/internal/spec"

	"github.com/conform-spi/conform/admission"
)

// The interoperation rows: a lock holder we did not write, util-linux
// flock(1), must exclude the helper's guard exactly as its own holders do,
// and be excluded by it.

func rowFlockShared(r *rowRun) {
	d, a := r.flockRow()
	fl := r.startFlock("-s", filepath.Join(d, admission.FenceFile))
	a.expect(ObFlock, "guard-try "+d, inProgress, "our guard under flock -s")
	a.expect(ObBound, "guard 100 "+d, "waiting", "our bounded guard under flock -s waits")
	a.expectNext(ObFlock, inProgress, "and gives up")
	a.expect(ObFlock, "hold-try "+d, held, "our hold beside flock -s")
	a.expect(ObFlock, "release", released, "our hold lets go")
	fl.release(r)
	a.expect(ObFlock, "guard-try "+d, held, "our guard once flock -s let go")
}

func rowFlockExclusive(r *rowRun) {
	d, a := r.flockRow()
	fl := r.startFlock("-x", filepath.Join(d, admission.FenceFile))
	a.expect(ObFlock, "guard-try "+d, inProgress, "our guard under flock -x")
	a.expect(ObFlock, "hold-try "+d, inProgress, "our hold under flock -x")
	fl.release(r)
	a.expect(ObFlock, "hold-try "+d, held, "our hold once flock -x let go")
}

func rowFlockExcluded(r *rowRun) {
	d, a := r.flockRow()
	fence := filepath.Join(d, admission.FenceFile)
	a.expect(ObFlock, "guard-try "+d, held, "our guard")
	r.equal(ObFlock, r.flockNB("-s", fence), 1, "flock -n -s under our guard exits 1")
	r.equal(ObFlock, r.flockNB("-x", fence), 1, "flock -n -x under our guard exits 1")
	a.expect(ObFlock, "release", released, "our guard lets go")
	a.expect(ObFlock, "hold-try "+d, held, "our hold")
	r.equal(ObFlock, r.flockNB("-s", fence), 0, "flock -n -s beside our hold exits 0")
	r.equal(ObFlock, r.flockNB("-x", fence), 1, "flock -n -x under our hold exits 1")
	a.expect(ObFlock, "release", released, "our hold lets go")
	r.equal(ObFlock, r.flockNB("-x", fence), 0, "flock -n -x once we let go exits 0")
}

// flockRow makes a directory whose fence a helper created (so flock(1)
// opens the helper's 0640 file rather than creating its own), and the
// helper.
func (r *rowRun) flockRow() (string, *proc) {
	spec.Helper()
	d := r.dir()
	a := r.start("A", procOpts{})
	a.expect(ObFlock, "guard-try "+d, held, "create the fence")
	a.expect(ObFlock, "release", released, "let go")
	return d, a
}

// flockPath finds flock(1); util-linux ships it on Debian, so its absence
// fails the row rather than skipping it.
func (r *rowRun) flockPath() string {
	spec.Helper()
	path, err := exec.LookPath("flock")
	r.setup(err, "flock(1) from util-linux must be installed")
	return path
}

// flockHolder is a flock(1) holding a file until released.
type flockHolder struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
}

// startFlock runs flock MODE FILE, which says "held" once it holds the
// file and holds it until its input ends.
func (r *rowRun) startFlock(mode, file string) *flockHolder {
	spec.Helper()
	cmd := exec.Command(r.flockPath(), mode, file, "-c", "echo held; read x; exit 0")
	stdin, err := cmd.StdinPipe()
	r.setup(err, "stdin of flock(1)")
	stdout, err := cmd.StdoutPipe()
	r.setup(err, "stdout of flock(1)")
	r.setup(cmd.Start(), "start flock(1)")
	r.note("flock %s %s: started", mode, file)
	r.sp.Defer(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill() // the row failed before releasing; Wait reports the end
			_ = cmd.Wait()
		}
	})
	type read struct {
		line string
		err  error
	}
	lines := make(chan read, 1)
	go func() {
		line, err := bufio.NewReader(stdout).ReadString('\n')
		lines <- read{line, err}
	}()
	select {
	case l := <-lines:
		r.check(ObFlock, l.line == "held\n", fmt.Sprintf("flock %s %s takes the fence (read: %v)", mode, file, l.err), "held", l.line)
	case <-r.ctx.Done():
		r.fail(ObFlock, "flock "+mode+" did not take "+file+" before the row ended", "held", "nothing")
	}
	return &flockHolder{cmd: cmd, stdin: stdin}
}

// release ends flock(1)'s input and waits for it to exit.
func (f *flockHolder) release(r *rowRun) {
	spec.Helper()
	r.note("flock: released")
	r.setup(f.stdin.Close(), "close flock(1)'s input")
	r.setup(f.cmd.Wait(), "flock(1) exits once released")
}

// flockNB runs flock -n MODE FILE true and returns its exit code: 0 when it
// took the lock, 1 when the lock was held.
func (r *rowRun) flockNB(mode, file string) int {
	spec.Helper()
	err := exec.CommandContext(r.ctx, r.flockPath(), "-n", mode, file, "true").Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else {
		r.setup(err, "run flock -n %s %s", mode, file)
	}
	r.note("flock -n %s %s: exit %d", mode, file, code)
	return code
}
