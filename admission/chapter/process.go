//go:build linux

package chapter

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// nobody is the unprivileged participant: uid and gid 65534 (nobody,
// nogroup on Debian).
const nobody = 65534

// proc is one helper process, driven line by line.
type proc struct {
	name    string
	pid     int
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	lines   chan string
	stderr  lockedBuffer
	exited  chan struct{}
	waitErr error
}

// procOpts says how to start a helper.
type procOpts struct {
	// nobody runs it as uid and gid 65534 with no supplementary group.
	nobody bool
	// mountNS gives it a mount namespace of its own, so its mounts vanish
	// with it.
	mountNS bool
	// linger is handed to it as descriptor 3, for spawn-linger.
	linger *os.File
}

// start starts a helper, waits for its "ready" line, and kills it when the
// row ends.
func (c *Config) start(ctx context.Context, name string, o procOpts) *proc {
	GinkgoHelper()
	exe := c.executable()
	if o.nobody {
		exe = c.traversableCopy(exe)
	}
	p := &proc{name: name, lines: make(chan string, 16), exited: make(chan struct{})}
	p.cmd = exec.Command(exe)
	p.cmd.Env = append(os.Environ(), HelperEnv+"=1")
	p.cmd.Stderr = &p.stderr
	p.cmd.SysProcAttr = &syscall.SysProcAttr{}
	if o.nobody {
		p.cmd.SysProcAttr.Credential = &syscall.Credential{Uid: nobody, Gid: nobody, Groups: []uint32{}}
	}
	if o.mountNS {
		p.cmd.SysProcAttr.Unshareflags = syscall.CLONE_NEWNS
	}
	if o.linger != nil {
		p.cmd.ExtraFiles = []*os.File{o.linger}
	}
	var err error
	p.stdin, err = p.cmd.StdinPipe()
	Expect(err).NotTo(HaveOccurred())
	stdout, err := p.cmd.StdoutPipe()
	Expect(err).NotTo(HaveOccurred())
	Expect(p.cmd.Start()).To(Succeed(), "start helper %s (%s)", name, exe)
	go p.read(stdout)
	DeferCleanup(p.kill)
	ready := p.next(ctx)
	Expect(ready).To(HavePrefix("ready "), "helper %s's first line", name)
	p.pid, err = strconv.Atoi(strings.TrimPrefix(ready, "ready "))
	Expect(err).NotTo(HaveOccurred())
	return p
}

func (p *proc) read(stdout io.Reader) {
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		p.lines <- sc.Text()
	}
	close(p.lines)
	p.waitErr = p.cmd.Wait()
	close(p.exited)
}

// send writes one command line.
func (p *proc) send(cmd string) {
	GinkgoHelper()
	_, err := fmt.Fprintln(p.stdin, cmd)
	Expect(err).NotTo(HaveOccurred(), "send %q to helper %s; its stderr: %s", cmd, p.name, p.stderr.String())
}

// next waits for the helper's next line.
func (p *proc) next(ctx context.Context) string {
	GinkgoHelper()
	select {
	case line, ok := <-p.lines:
		if !ok {
			<-p.exited
			Fail(fmt.Sprintf("helper %s ended (%v) without answering; its stderr: %s", p.name, p.waitErr, p.stderr.String()))
		}
		return line
	case <-ctx.Done():
		Fail(fmt.Sprintf("helper %s did not answer before the row ended; its stderr: %s", p.name, p.stderr.String()))
	}
	return ""
}

// do sends a command and answers the helper's next line.
func (p *proc) do(ctx context.Context, cmd string) string {
	GinkgoHelper()
	p.send(cmd)
	return p.next(ctx)
}

// expect sends a command and asserts its answer.
func (p *proc) expect(ctx context.Context, cmd, want, why string) {
	GinkgoHelper()
	Expect(p.do(ctx, cmd)).To(Equal(want), "%s: helper %s, %q", why, p.name, cmd)
}

// expectNext asserts the helper's next line, without sending anything.
func (p *proc) expectNext(ctx context.Context, want, why string) {
	GinkgoHelper()
	Expect(p.next(ctx)).To(Equal(want), "%s: helper %s", why, p.name)
}

// kill ends the helper with SIGKILL and reaps it; a helper that already
// ended is only reaped.
func (p *proc) kill() {
	GinkgoHelper()
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		Expect(err).To(MatchError(os.ErrProcessDone), "kill helper %s", p.name)
	}
	<-p.exited
}

func (c *Config) executable() string {
	GinkgoHelper()
	if c.Executable != "" {
		return c.Executable
	}
	exe, err := os.Executable()
	Expect(err).NotTo(HaveOccurred())
	return exe
}

// traversableCopy copies the executable into a directory nobody can reach
// (the build's own directory is usually private to its owner).
func (c *Config) traversableCopy(exe string) string {
	GinkgoHelper()
	dir := c.dir()
	dst := filepath.Join(dir, filepath.Base(exe))
	src, err := os.Open(exe)
	Expect(err).NotTo(HaveOccurred())
	defer src.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	Expect(err).NotTo(HaveOccurred())
	_, err = io.Copy(out, src)
	Expect(err).NotTo(HaveOccurred())
	Expect(out.Close()).To(Succeed())
	return dst
}

// lockedBuffer collects a helper's stderr.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
