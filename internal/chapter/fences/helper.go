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
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/conform-spi/conform/admission"
)

// lingerFd is the descriptor a helper started by the chapter may inherit:
// the read end of a pipe the chapter keeps, handed to a spawned child as its
// standard input so the child outlives its parent.
const lingerFd = 3

// ServeHelperIfRequested serves as the chapter's helper and exits when
// HelperEnv is set to 1, and returns at once otherwise. Call it first thing
// in the TestMain (or main) of the executable the chapter starts as its
// helper (the default Config.Command).
//
// The helper speaks protocol v1 of docs/admission-helper-protocol.md over
// stdin and stdout, and takes its fences with package admission. It starts
// by printing "ready PID v1", reads one command a line and writes one
// answer a line ("waiting" may come first for a bounded take), and exits at
// the end of its input:
//
//	install standalone|composed   -> ok
//	umask OCTAL                   -> ok
//	guard-try DIR | hold-try DIR  -> held [skipped=N] | refused CODE [CAUSE] | error TEXT
//	guard MS DIR  | hold MS DIR   -> [waiting] then as above
//	set CASE ROOT                 -> a guard try of a named order case
//	realm-guard ROOT ID           -> a guard try of realm ID's C fence
//	release                       -> released
//	spawn-linger                  -> spawned PID (a helper child on fd 3)
//	bind SRC DST                  -> ok (a bind mount in its namespace)
//
// DIR's fence is the one beside a document of DIR. FencesBugEnv turns the
// helper into one of the canaries, and UnsupportedEnv makes it answer
// "unsupported" to the commands it lists.
func ServeHelperIfRequested() {
	if os.Getenv(HelperEnv) != "1" {
		return
	}
	if err := serve(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "admission helper: %v\n", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// server is one helper's state: its install and what it holds.
type server struct {
	out      io.Writer
	bug      string
	umask    int
	in       admission.Install
	held     []interface{ Release() error }
	children []*exec.Cmd
}

func serve(r io.Reader, w io.Writer) error {
	s := &server{out: w, bug: os.Getenv(FencesBugEnv)}
	if err := s.startCanary(); err != nil {
		return err
	}
	defer s.reapChildren()
	if _, err := fmt.Fprintf(w, "ready %d %s\n", os.Getpid(), ProtocolVersion); err != nil {
		return err
	}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		if _, err := fmt.Fprintln(w, s.do(strings.Fields(sc.Text()))); err != nil {
			return err
		}
	}
	return sc.Err()
}

func (s *server) do(args []string) string {
	if len(args) == 0 {
		return "error empty command"
	}
	if slices.Contains(strings.Split(os.Getenv(UnsupportedEnv), ","), args[0]) {
		return "unsupported " + args[0] + " is listed in " + UnsupportedEnv
	}
	// A failed write here fails the command's own answer just after.
	s.in.Waiting = func(admission.Fence) { _, _ = fmt.Fprintln(s.out, "waiting") }
	switch cmd, n := args[0], len(args); {
	case cmd == "install" && n == 2:
		s.in.Composed = args[1] == "composed"
		return "ok"
	case cmd == "umask" && n == 2:
		mask, err := strconv.ParseUint(args[1], 8, 32)
		if err != nil {
			return "error " + err.Error()
		}
		s.umask = int(mask)
		unix.Umask(s.umask)
		return "ok"
	case cmd == "guard-try" && n == 2:
		return s.take(true, false, 0, docFence(args[1]))
	case cmd == "hold-try" && n == 2:
		return s.take(false, false, 0, docFence(args[1]))
	case (cmd == "guard" || cmd == "hold") && n == 3:
		ms, err := strconv.Atoi(args[1])
		if err != nil {
			return "error " + err.Error()
		}
		return s.take(cmd == "guard", true, time.Duration(ms)*time.Millisecond, docFence(args[2]))
	case cmd == "set" && n == 3:
		c, ok := orderCases[args[1]]
		if !ok {
			return "error no order case " + args[1]
		}
		set, err := c.build(layoutAt(args[2]))
		if err != nil {
			return answer(err)
		}
		return s.guard(s.in.TryAcquireGuard(set...))
	case cmd == "realm-guard" && n == 3:
		f, err := layoutAt(args[1]).Credential(args[2])
		if err != nil {
			return answer(err)
		}
		return s.guard(s.in.TryAcquireGuard(f))
	case cmd == "release" && n == 1:
		var errs []error
		for i := len(s.held) - 1; i >= 0; i-- {
			errs = append(errs, s.held[i].Release())
		}
		s.held = nil
		if err := errors.Join(errs...); err != nil {
			return "error " + err.Error()
		}
		return "released"
	case cmd == "spawn-linger" && n == 1:
		return s.spawnLinger()
	case cmd == "bind" && n == 3:
		if err := unix.Mount(args[1], args[2], "", unix.MS_BIND, ""); err != nil {
			return "error " + err.Error()
		}
		return "ok"
	}
	return "error unknown command " + strings.Join(args, " ")
}

// take serves a guard or a hold of one document fence, tried or bounded
// by bound; a canary's bug may change how.
func (s *server) take(guard, wait bool, bound time.Duration, f admission.Fence) string {
	if line, ok := s.canaryTake(guard, wait, bound, f); ok {
		return line
	}
	switch {
	case guard && wait:
		return s.guard(s.in.AcquireGuard(bound, f))
	case guard:
		return s.guard(s.in.TryAcquireGuard(f))
	case wait:
		return s.hold(s.in.AcquireHold(bound, f))
	}
	return s.hold(s.in.TryAcquireHold(f))
}

func (s *server) guard(g *admission.Guard, err error) string {
	if err != nil {
		return answer(err)
	}
	s.held = append(s.held, g)
	return heldAnswer(len(g.Skipped()))
}

func (s *server) hold(h *admission.Hold, err error) string {
	if err != nil {
		return answer(err)
	}
	s.held = append(s.held, h)
	return heldAnswer(len(h.Skipped()))
}

func heldAnswer(skipped int) string {
	if skipped > 0 {
		return fmt.Sprintf("held skipped=%d", skipped)
	}
	return "held"
}

// answer is the line for a refusal; an error that is neither refusal is
// reported as such, so a row sees it as a failure.
func answer(err error) string {
	var p *admission.InProgressError
	var u *admission.UnavailableError
	switch {
	case errors.As(err, &p):
		return "refused " + string(p.Code())
	case errors.As(err, &u):
		return "refused " + string(u.Code()) + " " + u.Cause.String()
	}
	return "error " + err.Error()
}

// spawnLinger starts a helper child whose stdin is lingerFd, waits for it
// to be ready, and returns "spawned PID". The child lives until the chapter
// closes the pipe, whatever becomes of this helper.
func (s *server) spawnLinger() string {
	exe, err := os.Executable()
	if err != nil {
		return "error " + err.Error()
	}
	child := exec.Command(exe)
	child.Env = os.Environ()
	child.Stdin = os.NewFile(lingerFd, "linger")
	out, err := child.StdoutPipe()
	if err != nil {
		return "error " + err.Error()
	}
	if err := child.Start(); err != nil {
		return "error " + err.Error()
	}
	s.children = append(s.children, child)
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		return "error child: " + err.Error()
	}
	pid, err := parseReady(strings.TrimSpace(line))
	if err != nil {
		return "error child: " + err.Error()
	}
	return "spawned " + strconv.Itoa(pid)
}

// reapChildren waits for spawned children; they end when the chapter
// closes their input.
func (s *server) reapChildren() {
	for _, c := range s.children {
		if err := c.Wait(); err != nil {
			fmt.Fprintf(os.Stderr, "admission helper: child: %v\n", err)
		}
	}
}

func docFence(dir string) admission.Fence {
	return admission.DocumentFence(filepath.Join(dir, "document"))
}

func layoutAt(root string) admission.Layout {
	return admission.Layout{
		UserRoot:       filepath.Join(root, "user"),
		CredentialRoot: filepath.Join(root, "cred"),
		StateRoot:      filepath.Join(root, "state"),
	}
}
