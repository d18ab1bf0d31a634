package engine

import (
	"errors"
	"io"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"
)

// signalWatch notes SIGINT and SIGTERM while the command runs, so that no
// signal ends the process by default while the reports are being written,
// and takes SIGPIPE, so that a closed stdout makes writes fail with EPIPE
// instead of killing the process (see os/signal on SIGPIPE). The first
// interrupt ends the context RunBinary runs the rows under, which stops
// them; the command reads count after the run to say it was interrupted.
type signalWatch struct {
	ch    chan os.Signal
	done  chan struct{}
	n     atomic.Int32
	first chan struct{} // closed at the first SIGINT or SIGTERM
	once  sync.Once
}

// interrupts is the watch of the command's run; a process runs one.
var interrupts struct {
	mu sync.Mutex
	w  *signalWatch
}

// watchSignals starts noting SIGINT and SIGTERM and taking SIGPIPE, and
// returns the watch; stop ends it.
func watchSignals() *signalWatch {
	w := &signalWatch{ch: make(chan os.Signal, 4), done: make(chan struct{}), first: make(chan struct{})}
	signal.Notify(w.ch, os.Interrupt, syscall.SIGTERM, syscall.SIGPIPE)
	go func() {
		for {
			select {
			case s := <-w.ch:
				if s == syscall.SIGPIPE {
					continue
				}
				w.n.Add(1)
				w.once.Do(func() { close(w.first) })
			case <-w.done:
				return
			}
		}
	}()
	interrupts.mu.Lock()
	interrupts.w = w
	interrupts.mu.Unlock()
	return w
}

// count returns how many SIGINT and SIGTERM the watch has noted.
func (w *signalWatch) count() int { return int(w.n.Load()) }

// stop stops the watch. A signal after it takes its default action again,
// but in a process that exits once the command returns (see Main): there
// a signal between the run's end and the exit is still taken, so that it
// cannot turn the exit code the run decided into a death by signal.
func (w *signalWatch) stop() {
	if !exitsAfterCommand.Load() {
		signal.Stop(w.ch)
	}
	close(w.done)
	interrupts.mu.Lock()
	if interrupts.w == w {
		interrupts.w = nil
	}
	interrupts.mu.Unlock()
}

// firstInterrupt returns a channel closed once the command's watch notes
// a SIGINT or SIGTERM, or nil when no watch runs.
func firstInterrupt() <-chan struct{} {
	interrupts.mu.Lock()
	defer interrupts.mu.Unlock()
	if interrupts.w == nil {
		return nil
	}
	return interrupts.w.first
}

// pipeSafe is the command's stdout: once a write fails with EPIPE (the
// reader went away, as in `conform run | head -1`), it drops what follows,
// so that the run goes on to its reports and its exit code.
type pipeSafe struct {
	mu     sync.Mutex
	w      io.Writer
	broken bool
}

// Write writes p, or drops it once the pipe is broken; it returns the
// error of any other failed write.
func (p *pipeSafe) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.broken {
		return len(b), nil
	}
	n, err := p.w.Write(b)
	if errors.Is(err, syscall.EPIPE) {
		p.broken = true
		return len(b), nil
	}
	return n, err
}

// exitsAfterCommand is set by Main: the process exits with the code the
// command returns, and nothing runs after it.
var exitsAfterCommand atomic.Bool

// The moments of a run a test can hold it at, to signal it there. A build
// with the conformcanary tag sets them to the end-to-end tests' hooks
// (see testhook_canary.go); the shipped command has none.
var (
	// beforeRows runs once the run's interrupt watch is set, before the
	// first row.
	beforeRows = func() {}
	// afterRows runs once the last row and its cleanups ended, before the
	// report model is built.
	afterRows = func() {}
	// beforeReportWrite runs just before the reports are written.
	beforeReportWrite = func() {}
	// beforeExit runs once the command decided its exit code, wrote its
	// last line and stopped its signal watch, before it returns.
	beforeExit = func() {}
)
