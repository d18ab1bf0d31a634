//go:build linux

package fences

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/conform-spi/conform/internal/spec"
)

// nobody is the unprivileged participant: uid and gid 65534 (nobody,
// nogroup on Debian).
const nobody = 65534

// helperPipeDelay is how long the chapter waits for a helper's pipes to
// close once the helper ended.
const helperPipeDelay = time.Second

// helperExitDelay is how long a helper whose stdout ended has to exit.
// One that still runs then has broken the protocol: it can answer nothing
// more. It exceeds helperPipeDelay, which a helper's reaping may take.
const helperExitDelay = 2 * time.Second

// maxHelperLine bounds one line a helper writes on its stdout; a longer
// line is a protocol breach.
const maxHelperLine = 64 << 10

// maxHelperStderr bounds what the chapter keeps of a helper's stderr: its
// last bytes, so that a flood costs no more memory.
const maxHelperStderr = 16 << 10

// unsupported is the prefix of the answer of a helper that does not offer
// a command; the row is then not exercised.
const unsupported = "unsupported"

// proc is one helper process, driven line by line.
type proc struct {
	r       *rowRun
	name    string
	pid     int
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	lines   chan string
	readErr error // why the stdout's lines ended, read once lines is closed
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

// start starts a helper, waits for its "ready" line, checks its protocol
// version, and kills it when the row ends.
func (r *rowRun) start(name string, o procOpts) *proc {
	spec.Helper()
	argv := r.command()
	if o.nobody {
		if dir := r.dir(); !othersReach(dir) {
			r.notExercised("the unprivileged participant (nobody) cannot enter " + dir + ": give the chapter a directory every user can enter (conform run --fences-dir)")
		}
		argv[0] = r.reachableByNobody(argv[0])
	}
	p := &proc{r: r, name: name, lines: make(chan string, 16), exited: make(chan struct{})}
	p.cmd = exec.Command(argv[0], argv[1:]...)
	p.cmd.Env = append(append(os.Environ(), HelperEnv+"=1"), r.c.Env...)
	p.cmd.Stderr = &p.stderr
	p.cmd.WaitDelay = helperPipeDelay
	// A process group of its own, so that the row's end kills the helper
	// with every child it left in it.
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
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
	r.setup(err, "stdin of helper %s", name)
	stdout, err := p.cmd.StdoutPipe()
	r.setup(err, "stdout of helper %s", name)
	r.setup(p.cmd.Start(), "start helper %s (%s)", name, strings.Join(argv, " "))
	go p.read(stdout)
	go p.wait()
	r.sp.Defer(p.end)
	r.note("%s: start %s", name, strings.Join(argv, " "))
	line, ok := p.next()
	if !ok {
		spec.Fail(fmt.Sprintf("[helper] helper %s gave no ready line: %s", name, line))
	}
	pid, err := parseReady(line)
	if err != nil {
		spec.Fail(fmt.Sprintf("[helper] helper %s: %v", name, err))
	}
	p.pid = pid
	return p
}

// parseReady reads a helper's first line, "ready PID" or "ready PID v1",
// and returns the PID. A line without a version is taken as v1, the version
// helpers spoke before they stated one.
func parseReady(line string) (int, error) {
	f := strings.Fields(line)
	if len(f) < 2 || len(f) > 3 || f[0] != "ready" {
		return 0, fmt.Errorf("first line %q, want \"ready PID %s\"", line, ProtocolVersion)
	}
	pid, err := strconv.Atoi(f[1])
	if err != nil || pid <= 0 {
		return 0, fmt.Errorf("first line %q: %q is not a pid", line, f[1])
	}
	if len(f) == 3 && f[2] != ProtocolVersion {
		return 0, fmt.Errorf("the helper speaks protocol %s, the chapter %s", f[2], ProtocolVersion)
	}
	return pid, nil
}

// command returns the helper's program and arguments, in a fresh slice.
func (r *rowRun) command() []string {
	spec.Helper()
	if len(r.c.Command) > 0 {
		return append([]string(nil), r.c.Command...)
	}
	exe, err := os.Executable()
	r.setup(err, "find the current executable")
	return []string{exe}
}

// read passes the helper's lines on until its stdout ends, or is closed
// once the helper exited, or a line is longer than maxHelperLine.
func (p *proc) read(stdout io.Reader) {
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 4096), maxHelperLine)
	for sc.Scan() {
		p.lines <- sc.Text()
	}
	p.readErr = sc.Err()
	close(p.lines)
}

// wait reaps the helper. A child the helper started may keep its stderr
// (or stdout) open: the wait gives up on them helperPipeDelay after the
// helper itself ended.
func (p *proc) wait() {
	p.waitErr = p.cmd.Wait()
	close(p.exited)
}

// send writes one command line.
func (p *proc) send(cmd string) error {
	p.r.note("%s> %s", p.name, cmd)
	_, err := fmt.Fprintln(p.stdin, cmd)
	return err
}

// next waits for the helper's next line; ok is false when none came, and
// the line then says why.
func (p *proc) next() (line string, ok bool) {
	select {
	case line, ok := <-p.lines:
		if !ok {
			return p.ended(), false
		}
		p.r.note("%s< %s", p.name, line)
		return line, true
	case <-p.r.ctx.Done():
		return fmt.Sprintf("no answer before the row ended; its stderr: %s", p.stderr.String()), false
	}
}

// ended says why the helper's stdout gave no more lines: it ended with the
// helper, or the helper broke the protocol, with a line too long or with
// a stdout it closed while it runs on.
func (p *proc) ended() string {
	if errors.Is(p.readErr, bufio.ErrTooLong) {
		return fmt.Sprintf("protocol breach: the helper wrote a line longer than %d bytes; its stderr: %s", maxHelperLine, p.stderr.String())
	}
	if p.readErr != nil {
		return fmt.Sprintf("its stdout failed (%v); its stderr: %s", p.readErr, p.stderr.String())
	}
	t := time.NewTimer(helperExitDelay)
	defer t.Stop()
	select {
	case <-p.exited:
		return fmt.Sprintf("the helper ended (%v) without answering; its stderr: %s", p.waitErr, p.stderr.String())
	case <-t.C:
		return fmt.Sprintf("protocol breach: the helper closed its stdout and still ran %s later, so it can answer nothing more; its stderr: %s", helperExitDelay, p.stderr.String())
	case <-p.r.ctx.Done():
		return fmt.Sprintf("its stdout ended, and the row ended before the helper did; its stderr: %s", p.stderr.String())
	}
}

// answer waits for the helper's next line, failing the row for ob when none
// comes, and ending it as not exercised when the helper does not support
// the command.
func (p *proc) answer(ob, cmd string) string {
	spec.Helper()
	line, ok := p.next()
	if !ok {
		p.r.fail(ob, fmt.Sprintf("helper %s, %q: %s", p.name, cmd, line), "an answer", "none")
	}
	if line == unsupported || strings.HasPrefix(line, unsupported+" ") {
		p.r.notExercised(fmt.Sprintf("helper %s does not support %q: %s", p.name, cmd, line))
	}
	return line
}

// do sends a command and returns the helper's answer; ob is the obligation
// a missing answer breaks.
func (p *proc) do(ob, cmd string) string {
	spec.Helper()
	if err := p.send(cmd); err != nil {
		p.r.fail(ob, fmt.Sprintf("send %q to helper %s: %v; its stderr: %s", cmd, p.name, err, p.stderr.String()), "", "")
	}
	return p.answer(ob, cmd)
}

// expect sends a command and asserts its answer, for obligation ob.
func (p *proc) expect(ob, cmd, want, why string) {
	spec.Helper()
	got := p.do(ob, cmd)
	p.r.check(ob, got == want, fmt.Sprintf("%s: helper %s, %q", why, p.name, cmd), want, got)
}

// expectNext asserts the helper's next line, without sending anything.
func (p *proc) expectNext(ob, want, why string) {
	spec.Helper()
	got := p.answer(ob, "(the answer after)")
	p.r.check(ob, got == want, fmt.Sprintf("%s: helper %s", why, p.name), want, got)
}

// kill ends the helper with SIGKILL and reaps it; a helper that already
// ended is only reaped. The children it started live on until the row
// ends (the cloexec row needs them to).
func (p *proc) kill() {
	spec.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil && !errors.Is(err, os.ErrProcessDone) {
		spec.Fail(fmt.Sprintf("[setup] kill helper %s: %v", p.name, err))
	}
	<-p.exited
	p.r.note("%s: killed (%v)", p.name, p.waitErr)
}

// end is the helper's end with its row: it kills the helper's process
// group, the helper and every child left in it, and reaps the helper.
func (p *proc) end() {
	spec.Helper()
	killGroup(p.cmd.Process.Pid)
	p.kill()
}

// killGroup sends SIGKILL to the process group pgid. The group is gone
// once its last process is, which is no error.
func killGroup(pgid int) {
	spec.Helper()
	if err := syscall.Kill(-pgid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		spec.Fail(fmt.Sprintf("[setup] kill the process group %d: %v", pgid, err))
	}
}

// reachableByNobody returns program, or a copy of it in a row directory
// when nobody cannot reach it where it is (a test binary's build directory
// is usually private to its owner).
func (r *rowRun) reachableByNobody(program string) string {
	spec.Helper()
	path, err := exec.LookPath(program)
	r.setup(err, "find the helper %s", program)
	path, err = filepath.Abs(path)
	r.setup(err, "find the helper %s", program)
	if othersReach(path) {
		return path
	}
	dst := filepath.Join(r.dir(), filepath.Base(path))
	src, err := os.Open(path)
	r.setup(err, "copy the helper")
	defer src.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	r.setup(err, "copy the helper")
	_, err = io.Copy(out, src)
	r.setup(err, "copy the helper")
	r.setup(out.Close(), "copy the helper")
	return dst
}

// othersReach reports whether users other than the owner can execute path
// and search every directory above it.
func othersReach(path string) bool {
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm()&0o001 == 0 {
		return false
	}
	for d := filepath.Dir(path); ; d = filepath.Dir(d) {
		st, err := os.Stat(d)
		if err != nil || st.Mode().Perm()&0o001 == 0 {
			return false
		}
		if d == filepath.Dir(d) {
			return true
		}
	}
}

// lockedBuffer collects the last maxHelperStderr bytes of a helper's
// stderr.
type lockedBuffer struct {
	mu   sync.Mutex
	tail []byte
	lost bool // bytes before the kept tail were dropped
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := len(p)
	if n > maxHelperStderr {
		p = p[len(p)-maxHelperStderr:]
		b.lost = true
	}
	if over := len(b.tail) + len(p) - maxHelperStderr; over > 0 {
		b.tail = b.tail[:copy(b.tail, b.tail[over:])]
		b.lost = true
	}
	b.tail = append(b.tail, p...)
	return n, nil
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.lost {
		return "…" + string(b.tail)
	}
	return string(b.tail)
}
