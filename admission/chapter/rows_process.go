//go:build linux

package chapter

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/conform-spi/conform/admission"
)

// processRows: a fence is released with its holder's process, and only its
// holder's: "every descriptor is close-on-exec".
func processRows(c *Config) {
	Describe("The holder's process", func() {
		It("releases the fence at once when its holder is killed with SIGKILL", Label("admission:sigkill"), func(ctx SpecContext) {
			for _, take := range []string{"guard-try", "hold-try"} {
				d := c.dir()
				w, b := c.start(ctx, "W", procOpts{}), c.start(ctx, "B", procOpts{})
				w.expect(ctx, "guard-try "+d, held, "a writer creates the fence")
				w.expect(ctx, "release", released, "the writer lets go")
				a := c.start(ctx, "A", procOpts{})
				a.expect(ctx, take+" "+d, held, "the holder that will be killed")
				b.expect(ctx, "guard-try "+d, inProgress, "a guard while the holder lives")
				a.kill()
				expectKilled(a)
				b.expect(ctx, "guard-try "+d, held, "a guard that does not wait, right after the holder ("+take+") was killed")
			}
		}, SpecTimeout(c.RowTimeout))

		It("leaves no lock with a child started while a guard was held", Label("admission:cloexec"), func(ctx SpecContext) {
			d := c.dir()
			fence, err := filepath.EvalSymlinks(d)
			Expect(err).NotTo(HaveOccurred())
			fence = filepath.Join(fence, admission.FenceFile)
			// The children read their commands from this pipe, so they
			// outlive their parent until the row closes it.
			r, w, err := os.Pipe()
			Expect(err).NotTo(HaveOccurred())
			a := c.start(ctx, "A", procOpts{linger: r})
			DeferCleanup(w.Close)
			Expect(r.Close()).To(Succeed())
			b := c.start(ctx, "B", procOpts{})

			a.expect(ctx, "guard-try "+d, held, "the parent's guard")
			first := spawn(ctx, a, fence)
			b.expect(ctx, "guard-try "+d, inProgress, "the parent still holds")
			a.expect(ctx, "release", released, "the parent lets go")
			b.expect(ctx, "guard-try "+d, held, "a guard once the parent let go, its child still running")
			Expect(alive(first)).To(BeTrue(), "the first child runs on")
			b.expect(ctx, "release", released, "B lets go")

			a.expect(ctx, "guard-try "+d, held, "the parent's second guard")
			second := spawn(ctx, a, fence)
			a.kill() // lets go without unlocking: only its descriptor held the lock
			b.expect(ctx, "guard-try "+d, held, "a guard once the parent died, its children still running")
			Expect(alive(first)).To(BeTrue(), "the first child runs on")
			Expect(alive(second)).To(BeTrue(), "the second child runs on")
		}, SpecTimeout(c.RowTimeout))
	})
}

// spawn has p start a lingering child while it holds fence, and checks that
// the child has no descriptor of it.
func spawn(ctx SpecContext, p *proc, fence string) int {
	GinkgoHelper()
	line := p.do(ctx, "spawn-linger")
	Expect(line).To(HavePrefix("spawned "), "helper %s spawns a child", p.name)
	pid, err := strconv.Atoi(strings.TrimPrefix(line, "spawned "))
	Expect(err).NotTo(HaveOccurred())
	Expect(openFiles(pid)).NotTo(ContainElement(fence), "the child of %s inherited a descriptor of the fence", p.name)
	return pid
}

// openFiles lists what pid's descriptors name, from /proc.
func openFiles(pid int) []string {
	GinkgoHelper()
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	entries, err := os.ReadDir(dir)
	Expect(err).NotTo(HaveOccurred())
	var names []string
	for _, e := range entries {
		target, err := os.Readlink(filepath.Join(dir, e.Name()))
		if errors.Is(err, os.ErrNotExist) {
			continue // closed since the listing
		}
		Expect(err).NotTo(HaveOccurred())
		names = append(names, target)
	}
	return names
}

// alive reports whether pid runs and is not a zombie.
func alive(pid int) bool {
	GinkgoHelper()
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if errors.Is(err, os.ErrNotExist) {
		return false
	}
	Expect(err).NotTo(HaveOccurred())
	// The state follows the command name, which is in parentheses.
	rest := string(stat[strings.LastIndexByte(string(stat), ')')+1:])
	return !strings.HasPrefix(strings.TrimSpace(rest), "Z")
}

// expectKilled asserts that p ended by SIGKILL.
func expectKilled(p *proc) {
	GinkgoHelper()
	var ee *exec.ExitError
	Expect(errors.As(p.waitErr, &ee)).To(BeTrue(), "helper %s ended with %v", p.name, p.waitErr)
	status, ok := ee.Sys().(syscall.WaitStatus)
	Expect(ok && status.Signaled() && status.Signal() == syscall.SIGKILL).To(BeTrue(), "helper %s ended with %v; want SIGKILL", p.name, p.waitErr)
}
