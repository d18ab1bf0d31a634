//go:build linux

package chapter

import (
	"bufio"
	"context"
	"errors"
	"io"
	"os/exec"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/conform-spi/conform/admission"
)

// interopRows: a lock holder we did not write, util-linux flock(1), must
// exclude our guard exactly as our own holders do, and be excluded by it.
func interopRows(c *Config) {
	Describe("Interoperation with flock(1)", func() {
		It("excludes our guard and shares with our hold while flock -s holds the fence", Label("admission:flock-shared"), func(ctx SpecContext) {
			d, a := flockRow(ctx, c)
			fl := startFlock(ctx, "-s", filepath.Join(d, admission.FenceFile))
			a.expect(ctx, "guard-try "+d, inProgress, "our guard under flock -s")
			a.expect(ctx, "guard 100 "+d, "waiting", "our bounded guard under flock -s waits")
			a.expectNext(ctx, inProgress, "and gives up")
			a.expect(ctx, "hold-try "+d, held, "our hold beside flock -s")
			a.expect(ctx, "release", released, "our hold lets go")
			fl.release()
			a.expect(ctx, "guard-try "+d, held, "our guard once flock -s let go")
		}, SpecTimeout(c.RowTimeout))

		It("excludes our guard and our hold while flock -x holds the fence", Label("admission:flock-exclusive"), func(ctx SpecContext) {
			d, a := flockRow(ctx, c)
			fl := startFlock(ctx, "-x", filepath.Join(d, admission.FenceFile))
			a.expect(ctx, "guard-try "+d, inProgress, "our guard under flock -x")
			a.expect(ctx, "hold-try "+d, inProgress, "our hold under flock -x")
			fl.release()
			a.expect(ctx, "hold-try "+d, held, "our hold once flock -x let go")
		}, SpecTimeout(c.RowTimeout))

		It("excludes flock(1) as our own holders are excluded", Label("admission:flock-excluded"), func(ctx SpecContext) {
			d, a := flockRow(ctx, c)
			fence := filepath.Join(d, admission.FenceFile)
			a.expect(ctx, "guard-try "+d, held, "our guard")
			Expect(flockNB(ctx, "-s", fence)).To(Equal(1), "flock -n -s under our guard")
			Expect(flockNB(ctx, "-x", fence)).To(Equal(1), "flock -n -x under our guard")
			a.expect(ctx, "release", released, "our guard lets go")
			a.expect(ctx, "hold-try "+d, held, "our hold")
			Expect(flockNB(ctx, "-s", fence)).To(Equal(0), "flock -n -s beside our hold")
			Expect(flockNB(ctx, "-x", fence)).To(Equal(1), "flock -n -x under our hold")
			a.expect(ctx, "release", released, "our hold lets go")
			Expect(flockNB(ctx, "-x", fence)).To(Equal(0), "flock -n -x once we let go")
		}, SpecTimeout(c.RowTimeout))
	})
}

// flockRow makes a directory whose fence a helper created (so flock(1)
// opens our 0640 file rather than creating its own), and the helper.
func flockRow(ctx context.Context, c *Config) (string, *proc) {
	GinkgoHelper()
	d := c.dir()
	a := c.start(ctx, "A", procOpts{})
	a.expect(ctx, "guard-try "+d, held, "create the fence")
	a.expect(ctx, "release", released, "let go")
	return d, a
}

// flockPath finds flock(1); util-linux ships it on Debian, so its absence
// fails the row rather than skipping it.
func flockPath() string {
	GinkgoHelper()
	path, err := exec.LookPath("flock")
	Expect(err).NotTo(HaveOccurred(), "flock(1) from util-linux must be installed")
	return path
}

// flockHolder is a flock(1) holding a file until released.
type flockHolder struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
}

// startFlock runs flock MODE FILE, which says "held" once it holds the
// file and holds it until its input ends.
func startFlock(ctx context.Context, mode, file string) *flockHolder {
	GinkgoHelper()
	cmd := exec.Command(flockPath(), mode, file, "-c", "echo held; read x; exit 0")
	stdin, err := cmd.StdinPipe()
	Expect(err).NotTo(HaveOccurred())
	stdout, err := cmd.StdoutPipe()
	Expect(err).NotTo(HaveOccurred())
	Expect(cmd.Start()).To(Succeed())
	DeferCleanup(func() {
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
	case r := <-lines:
		Expect(r.line).To(Equal("held\n"), "flock %s %s (read: %v)", mode, file, r.err)
	case <-ctx.Done():
		Fail("flock " + mode + " did not take " + file + " before the row ended")
	}
	return &flockHolder{cmd: cmd, stdin: stdin}
}

// release ends flock(1)'s input and waits for it to exit.
func (f *flockHolder) release() {
	GinkgoHelper()
	Expect(f.stdin.Close()).To(Succeed())
	Expect(f.cmd.Wait()).To(Succeed(), "flock(1) exits once released")
}

// flockNB runs flock -n MODE FILE true and answers its exit code: 0 when it
// took the lock, 1 when the lock was held.
func flockNB(ctx context.Context, mode, file string) int {
	GinkgoHelper()
	err := exec.CommandContext(ctx, flockPath(), "-n", mode, file, "true").Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	Expect(err).NotTo(HaveOccurred(), "run flock -n %s %s", mode, file)
	return 0
}
