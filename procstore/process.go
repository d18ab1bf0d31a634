package procstore

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/instore"
	"github.com/conform-spi/conform/internal/hook"
	"github.com/conform-spi/conform/procstore/internal/wire"
)

// The bounds the harness's side keeps.
const (
	stderrKeep = 8 << 10   // the end of a process's stderr kept for error texts
	maxLine    = 128 << 20 // the longest line a process may write
	closeWait  = 10 * time.Second
)

// traceLine, when set (by tests), sees every line either side writes: dir
// is 'H' for the harness's, 'S' for the store process's.
var traceLine func(pid int, dir byte, line []byte)

// ProtocolError is what every call on a process returns once the process
// broke the protocol (docs/store-process-protocol.md): it is none of the
// contract's six errors, so the harness reports it as a breach.
type ProtocolError struct {
	Detail string // what the harness saw
	Stderr string // the end of the process's standard error
}

// Error names the breach and quotes the end of the process's stderr.
func (e *ProtocolError) Error() string {
	s := "store process broke the protocol: " + e.Detail
	if e.Stderr != "" {
		s += "; its stderr ends: " + e.Stderr
	}
	return s
}

// Store is the handle of one store process. It implements
// hoststore.HostStore, hoststore.Killer and io.Closer, and is safe for
// concurrent use.
type Store struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stderr *tail
	onEnd  func(*Store)
	timing hoststore.FenceTiming
	name   string
	inj    hook.Injector // the injector of the context Open was called with, or nil

	wmu sync.Mutex // one line at a time on stdin

	mu        sync.Mutex
	next      uint64
	pending   map[uint64]*pending
	abandoned map[uint64]struct{}
	crashed   map[uint64]error // a commit crashed at a site: the error its request returns
	broken    *ProtocolError
	killed    bool
	closing   bool
	reaped    bool  // Wait returned: the process's id may name another process now
	ended     error // what calls return once the process is gone

	done chan struct{} // closed once the process ended and was reaped
}

var (
	_ hoststore.HostStore = (*Store)(nil)
	_ hoststore.Killer    = (*Store)(nil)
	_ io.Closer           = (*Store)(nil)
)

type pending struct {
	op  string
	ctx context.Context
	ch  chan reply
}

type reply struct {
	ok  json.RawMessage
	err error
}

// start runs argv with env and makes the handshake. The handle keeps the
// injector ctx carries for the at calls of requests whose context carries
// none.
func start(ctx context.Context, argv, env []string, onEnd func(*Store)) (*Store, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.WaitDelay = 2 * time.Second
	s := &Store{
		cmd: cmd, stderr: &tail{}, onEnd: onEnd, inj: hook.From(ctx),
		pending: map[uint64]*pending{}, abandoned: map[uint64]struct{}{}, crashed: map[uint64]error{},
		done: make(chan struct{}),
	}
	cmd.Stderr = s.stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, &hoststore.UnavailableError{Detail: "procstore: " + err.Error()}
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, &hoststore.UnavailableError{Detail: "procstore: " + err.Error()}
	}
	s.stdin = stdin
	if err := cmd.Start(); err != nil {
		return nil, &hoststore.UnavailableError{Detail: fmt.Sprintf("procstore: start %q: %v", argv[0], err)}
	}
	go s.read(stdout)
	var h wire.Hello
	err = s.call(ctx, &wire.Message{Op: wire.OpHello, Versions: []int{wire.Version}}, &h)
	if err == nil {
		err = s.checkHello(&h)
	}
	if err != nil {
		s.Kill()
		<-s.done
		return nil, err
	}
	return s, nil
}

func (s *Store) checkHello(h *wire.Hello) error {
	if h.Version != wire.Version {
		return s.breakProtocol(fmt.Sprintf("the handshake answered version %d; the harness offered [%d]", h.Version, wire.Version), nil)
	}
	t, err := h.Timing.FenceTiming()
	if err != nil {
		return s.breakProtocol("the handshake declared a fence timing out of the contract's bounds: "+err.Error(), nil)
	}
	s.timing, s.name = t, h.Store
	return nil
}

// send writes one message as a line on the process's stdin.
func (s *Store) send(m any) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if traceLine != nil {
		traceLine(s.cmd.Process.Pid, 'H', b)
	}
	_, err = s.stdin.Write(append(b, '\n'))
	return err
}

// call sends a request and decodes its result into out.
func (s *Store) call(ctx context.Context, m *wire.Message, out any) error {
	s.mu.Lock()
	if s.ended != nil || s.broken != nil {
		err := s.ended
		if s.broken != nil {
			err = s.broken
		}
		s.mu.Unlock()
		return err
	}
	id := s.next
	s.next++
	p := &pending{op: m.Op, ctx: ctx, ch: make(chan reply, 1)}
	s.pending[id] = p
	s.mu.Unlock()
	m.ID = &id
	_ = s.send(m) // a process that is gone cannot read it; the reader answers the call when it sees the end
	select {
	case r := <-p.ch:
		if r.err != nil {
			return r.err
		}
		if err := decodeResult(r.ok, out); err != nil {
			return s.breakProtocol(fmt.Sprintf("answered %s (id %d) with a result of the wrong shape: %v", m.Op, id, err), nil)
		}
		return nil
	case <-ctx.Done():
		s.mu.Lock()
		if _, ok := s.pending[id]; ok {
			delete(s.pending, id)
			s.abandoned[id] = struct{}{}
		}
		s.mu.Unlock()
		return ctx.Err()
	}
}

// decodeResult decodes an ok result into out and checks that the fields
// its op requires are there, and that the heads, names and cursors it
// carries are ones hoststore's Validate functions accept.
func decodeResult(raw json.RawMessage, out any) error {
	if !bytes.HasPrefix(bytes.TrimSpace(raw), []byte("{")) {
		return fmt.Errorf("ok is %s, not an object", clip(string(raw), 80))
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return err
	}
	switch r := out.(type) {
	case *wire.Grant:
		if r.Token == nil || r.SupersededLeaseN == nil || *r.SupersededLeaseN < 0 {
			return errors.New("acquire_fence needs token and a non-negative superseded_lease_ns")
		}
	case *wire.HeadResult:
		if r.Head != nil {
			if _, err := r.Head.VersionedHead(); err != nil {
				return err
			}
		}
	case *wire.Page:
		if r.Heads == nil {
			return errors.New("list_heads needs heads")
		}
		for _, h := range *r.Heads {
			if err := hoststore.ScopeName(h.Name).Validate(); err != nil {
				return fmt.Errorf("a listed head's %v", err)
			}
			if _, err := h.VersionedHead(); err != nil {
				return err
			}
		}
		if r.Next != nil {
			if err := hoststore.ScopeName(*r.Next).Validate(); err != nil {
				return fmt.Errorf("the next cursor's %v", err)
			}
		}
	case *wire.Rows:
		if r.Rows == nil {
			return errors.New("read_rows needs rows")
		}
		for _, row := range *r.Rows {
			if row.Index == nil || row.Data == nil {
				return errors.New("a row needs index and data")
			}
		}
	}
	return nil
}

// breakProtocol records that the process broke the protocol (the first
// breach wins), kills it, and returns the error every call now returns; p,
// a request already taken off the pending list, gets it too.
func (s *Store) breakProtocol(detail string, p *pending) *ProtocolError {
	s.mu.Lock()
	if s.broken == nil {
		s.broken = &ProtocolError{Detail: detail, Stderr: s.stderr.String()}
	}
	err := s.broken
	s.mu.Unlock()
	if p != nil {
		p.ch <- reply{err: err}
	}
	s.signal()
	return err
}

// read reads the process's lines until its output ends, then reaps it.
func (s *Store) read(stdout io.Reader) {
	br := bufio.NewReaderSize(stdout, 64<<10)
	var partial bool
	for {
		line, err := readLine(br)
		if err != nil {
			partial = len(line) > 0 || errors.Is(err, errLongLine)
			break
		}
		if traceLine != nil {
			traceLine(s.cmd.Process.Pid, 'S', line)
		}
		s.handle(line)
	}
	s.mu.Lock()
	graceful := s.closing && !s.killed && s.broken == nil
	s.mu.Unlock()
	if !graceful {
		// Whatever the process left in its group goes with it. The leader
		// is not reaped yet, so the group's id is still this process's.
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	}
	werr := s.cmd.Wait()
	s.mu.Lock()
	s.reaped = true
	s.mu.Unlock()
	s.finish(werr, partial)
}

var errLongLine = errors.New("line too long")

// readLine returns one line without its newline.
func readLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		line = append(line, chunk...)
		switch {
		case err == nil:
			return line[:len(line)-1], nil
		case errors.Is(err, bufio.ErrBufferFull):
			if len(line) > maxLine {
				return line, errLongLine
			}
		default:
			return line, err
		}
	}
}

// handle takes one line from the process.
func (s *Store) handle(line []byte) {
	s.mu.Lock()
	broken := s.broken != nil
	s.mu.Unlock()
	if broken {
		return
	}
	var m wire.Message
	if err := json.Unmarshal(line, &m); err != nil || (m.ID == nil) == (m.Call == nil) {
		s.breakProtocol(fmt.Sprintf("wrote a line that is no message of the protocol: %q", clip(string(line), 200)), nil)
		return
	}
	if m.Call != nil {
		if m.Op != wire.OpAt || m.Req == nil || m.Site == "" || m.CommitID == "" {
			s.breakProtocol(fmt.Sprintf("made a call that is not an at call with req, site and commit_id: %q", clip(string(line), 200)), nil)
			return
		}
		go s.at(*m.Call, *m.Req, instore.Site(m.Site), hoststore.CommitID(m.CommitID))
		return
	}
	id := *m.ID
	s.mu.Lock()
	p := s.pending[id]
	delete(s.pending, id)
	_, gaveUp := s.abandoned[id]
	delete(s.abandoned, id)
	s.mu.Unlock()
	if p == nil {
		if !gaveUp {
			s.breakProtocol(fmt.Sprintf("answered id %d, which it was not sent or had answered already: %q", id, clip(string(line), 200)), nil)
		}
		return
	}
	switch {
	case (m.OK == nil) == (m.Error == nil):
		s.breakProtocol(fmt.Sprintf("answered %s (id %d) with neither or both of ok and error: %q", p.op, id, clip(string(line), 200)), p)
	case m.Error != nil:
		err, bad := m.Error.Err()
		if bad != nil {
			s.breakProtocol(fmt.Sprintf("answered %s (id %d) with %v", p.op, id, bad), p)
			return
		}
		p.ch <- reply{err: err}
	default:
		p.ch <- reply{ok: m.OK}
	}
}

// at serves an at call: it runs the harness's in-store failpoint for the
// commit, then answers go on, or kills the process there when the harness
// crashes the commit. The failpoint is the injector of the request's
// context, else the one of the context the handle was opened with, else
// one internal/hook finds for the commit's id, as for a store in the
// harness's process.
func (s *Store) at(call, req uint64, site instore.Site, id hoststore.CommitID) {
	s.mu.Lock()
	p := s.pending[req]
	_, gaveUp := s.abandoned[req]
	sent := req < s.next
	s.mu.Unlock()
	answer := func(err *wire.Error) {
		m := map[string]any{"call": call}
		if err != nil {
			m["error"] = err
		} else {
			m["ok"] = struct{}{}
		}
		_ = s.send(m)
	}
	switch {
	case p == nil && !sent:
		s.breakProtocol(fmt.Sprintf("made an at call (%s of commit %q) for request %d, which it was not sent", site, id, req), nil)
		return
	case p == nil || gaveUp:
		answer(&wire.Error{Kind: "unavailable", Detail: fmt.Sprintf("the harness no longer waits for request %d", req)})
		return
	}
	err := hook.Call(s.bind(p.ctx), string(site), id)
	switch {
	case err == nil:
		answer(nil)
	case errors.Is(err, instore.ErrCrashed):
		s.mu.Lock()
		s.crashed[req] = err
		s.killed = true
		s.mu.Unlock()
		s.signal()
	default:
		answer(&wire.Error{Kind: "unavailable", Detail: err.Error()})
	}
}

// bind returns ctx carrying the handle's injector, unless ctx carries one
// or the handle has none.
func (s *Store) bind(ctx context.Context) context.Context {
	if s.inj == nil || hook.From(ctx) != nil {
		return ctx
	}
	return hook.With(ctx, s.inj)
}

// finish answers every request still pending once the process ended.
func (s *Store) finish(werr error, partial bool) {
	s.mu.Lock()
	var end error
	switch {
	case s.broken != nil:
		end = s.broken
	case s.killed:
		end = &hoststore.UnavailableError{Detail: "procstore: the store process was killed"}
	case s.closing && len(s.pending) == 0:
		end = &hoststore.UnavailableError{Detail: "procstore: the store process was closed"}
	default:
		what := "closed its output"
		if partial {
			what = "ended in the middle of a line"
		}
		detail := fmt.Sprintf("the process %s (%v) with %d requests unanswered", what, exitText(werr), len(s.pending))
		s.broken = &ProtocolError{Detail: detail, Stderr: s.stderr.String()}
		end = s.broken
	}
	s.ended = end
	for id, p := range s.pending {
		err := end
		switch {
		case s.crashed[id] != nil:
			err = s.crashed[id]
		case s.killed && s.broken == nil && p.op == wire.OpCommit:
			err = &hoststore.IndeterminateError{Detail: "procstore: the store process was killed with the commit in flight"}
		}
		p.ch <- reply{err: err}
	}
	clear(s.pending)
	s.mu.Unlock()
	close(s.done)
	if s.onEnd != nil {
		s.onEnd(s)
	}
}

func exitText(err error) string {
	if err == nil {
		return "exit status 0"
	}
	return err.Error()
}

// signal sends SIGKILL to the process's group, unless the process was
// reaped (its id may be another's by now).
func (s *Store) signal() {
	s.mu.Lock()
	reaped := s.reaped
	s.mu.Unlock()
	if !reaped {
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	}
}

// Kill ends the process at once with SIGKILL to its process group; calls
// in flight return *hoststore.UnavailableError (a commit
// *hoststore.IndeterminateError), and so do later calls. It does not block.
func (s *Store) Kill() {
	s.mu.Lock()
	if s.ended == nil {
		s.killed = true
	}
	s.mu.Unlock()
	s.signal()
}

// Close ends the process gracefully: it closes the process's standard
// input and waits for it to exit, at most closeWait, then kills it. It
// returns the process's breach of the protocol, if any.
func (s *Store) Close() error {
	s.mu.Lock()
	s.closing = true
	s.mu.Unlock()
	_ = s.stdin.Close() // without wmu: a write blocked on a process that reads nothing ends with it
	t := time.NewTimer(closeWait)
	defer t.Stop()
	select {
	case <-s.done:
	case <-t.C:
		s.Kill()
		<-s.done
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.broken != nil {
		return s.broken
	}
	return nil
}

// wait blocks until the process ended.
func (s *Store) wait() { <-s.done }

// String names the process and its store.
func (s *Store) String() string {
	return fmt.Sprintf("store process %d (%s)", s.cmd.Process.Pid, s.name)
}

// tail keeps the last stderrKeep bytes written to it.
type tail struct {
	mu  sync.Mutex
	buf []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - stderrKeep; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(bytes.TrimSpace(t.buf))
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
