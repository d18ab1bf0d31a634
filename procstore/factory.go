// Package procstore runs a store process (docs/store-process-protocol.md):
// a Factory over a program, any language, for harness.Run and for
// `conform run --store 'exec:PROGRAM ARGS…'`. Every Open starts the program
// as a new process over the factory's realm, a directory named to it in
// CONFORM_REALM; Kill is SIGKILL of the process's group, Close the end of
// its standard input. Package procstore/serve is the other side, for a
// store written in Go.
//
// A process that breaks the protocol makes its calls return a
// *ProtocolError, which is none of the contract's six errors: the harness
// reports it as a breach of the error contract.
package procstore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/conform-spi/conform/hoststore"
)

// Factory is one realm of a store process: a directory, and the program
// that serves it. It implements hoststore.HostStoreFactory and io.Closer,
// and is safe for concurrent use.
type Factory struct {
	argv  []string
	env   []string
	realm string
	owned bool

	mu     sync.Mutex
	live   map[*Store]struct{}
	closed bool
}

var _ hoststore.HostStoreFactory = (*Factory)(nil)

// Option configures a Factory.
type Option func(*Factory)

// WithEnv adds variables, each "KEY=value", to the environment of every
// process the factory starts.
func WithEnv(kv ...string) Option {
	return func(f *Factory) { f.env = append(f.env, kv...) }
}

// WithRealm names the realm's directory instead of a new temporary one. The
// factory does not remove it on Close.
func WithRealm(dir string) Option {
	return func(f *Factory) { f.realm = dir }
}

// New returns the factory of a fresh realm served by the program argv[0]
// with the arguments argv[1:]: a new, empty temporary directory that Close
// removes (unless WithRealm names one). It starts nothing yet.
func New(argv []string, opts ...Option) (*Factory, error) {
	if len(argv) == 0 || argv[0] == "" {
		return nil, errors.New("procstore: no program to run")
	}
	f := &Factory{argv: append([]string(nil), argv...), live: map[*Store]struct{}{}}
	for _, o := range opts {
		o(f)
	}
	if f.realm == "" {
		dir, err := os.MkdirTemp("", "conform-exec-*")
		if err != nil {
			return nil, fmt.Errorf("procstore: the realm's directory: %w", err)
		}
		f.realm, f.owned = dir, true
	}
	abs, err := filepath.Abs(f.realm) // the protocol names an absolute path
	if err != nil {
		return nil, fmt.Errorf("procstore: the realm's directory: %w", err)
	}
	f.realm = abs
	return f, nil
}

// ParseCommand splits the command of an exec: URL (what follows "exec:")
// at spaces into a program and its arguments.
func ParseCommand(cmd string) ([]string, error) {
	argv := strings.Fields(cmd)
	if len(argv) == 0 {
		return nil, errors.New("exec: names no program; the form is exec:PROGRAM ARGS…")
	}
	return argv, nil
}

// Realm returns the realm's directory, which every process gets in
// CONFORM_REALM.
func (f *Factory) Realm() string { return f.realm }

// Open starts a new process over the realm and returns its handle once
// the process finished the handshake. It returns *hoststore.UnavailableError
// when the program cannot start or the factory is closed, a *ProtocolError
// when the process breaks the handshake, or ctx.Err(). The in-store
// failpoints of the handle's commits are those of the harness's run whose
// context they are sent with, else those of the run whose context Open
// was called with.
func (f *Factory) Open(ctx context.Context) (hoststore.HostStore, error) {
	s, err := f.open(ctx)
	if err != nil {
		return nil, err
	}
	return s, nil
}

func (f *Factory) open(ctx context.Context) (*Store, error) {
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return nil, &hoststore.UnavailableError{Detail: "procstore: the factory is closed"}
	}
	f.mu.Unlock()
	s, err := start(ctx, f.argv, f.environ(), f.forget)
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		s.Kill()
		return nil, &hoststore.UnavailableError{Detail: "procstore: the factory is closed"}
	}
	f.live[s] = struct{}{}
	return s, nil
}

// forget drops a process that ended from the factory's list.
func (f *Factory) forget(s *Store) {
	f.mu.Lock()
	delete(f.live, s)
	f.mu.Unlock()
}

func (f *Factory) environ() []string {
	env := append(os.Environ(), f.env...)
	return append(env, "CONFORM_REALM="+f.realm, "CONFORM_STORE_PROTOCOL=1")
}

// LapseFenceLeases starts a process, asks it to let every recorded lease
// run out (lapse_fence_leases) and closes it. It returns the store's
// contract error, a *ProtocolError or ctx.Err().
func (f *Factory) LapseFenceLeases(ctx context.Context) error {
	s, err := f.open(ctx)
	if err != nil {
		return err
	}
	err = s.lapse(ctx)
	if cerr := s.Close(); err == nil && cerr != nil {
		err = cerr
	}
	return err
}

// Close kills every process of the factory still running and removes the
// realm's directory when New made it. Later Opens return
// *hoststore.UnavailableError. It returns the removal's error; Close after
// Close does nothing.
func (f *Factory) Close() error {
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return nil
	}
	f.closed = true
	live := make([]*Store, 0, len(f.live))
	for s := range f.live {
		live = append(live, s)
	}
	f.mu.Unlock()
	for _, s := range live {
		s.Kill()
		s.wait()
	}
	if f.owned {
		return os.RemoveAll(f.realm)
	}
	return nil
}
