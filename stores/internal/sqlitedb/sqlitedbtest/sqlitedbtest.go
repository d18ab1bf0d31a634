// Package sqlitedbtest holds the tests that the stores built on package
// sqlitedb (stores/sqlite, stores/appendonly) run alike: their URL form,
// their options, their Close, and the whole conformance chapter. Each
// store's own tests call them with a Package describing the store.
package sqlitedbtest

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/conform-spi/conform/harness"
	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/stores/internal/sqlitedb"
)

// Factory is what the tests need of a store's factory type.
type Factory interface {
	hoststore.HostStoreFactory
	io.Closer
	// Path is the absolute path of the realm's database file.
	Path() string
}

// Package describes a store package to the tests: F is its factory type,
// O its option type. Every field is required.
type Package[F Factory, O any] struct {
	// Name is the store's name in the conformance report.
	Name string
	// Scheme is the store's URL scheme (its URLScheme).
	Scheme string
	// OtherSchemes are schemes of other stores, which OpenURL must refuse.
	OtherSchemes []string
	// NewRealm, OpenURL, WithFenceTiming and WithBusyTimeout are the
	// store's functions of these names.
	NewRealm        func(ctx context.Context, dir string, opts ...O) (F, error)
	OpenURL         func(ctx context.Context, url string) (hoststore.HostStoreFactory, error)
	WithFenceTiming func(hoststore.FenceTiming) O
	WithBusyTimeout func(time.Duration) O
}

// NewFactory makes a fresh, empty realm in t's temporary directory.
func (p Package[F, O]) NewFactory(t testing.TB) hoststore.HostStoreFactory {
	t.Helper()
	f, err := p.NewRealm(context.Background(), t.TempDir())
	if err != nil {
		t.Fatalf("NewRealm: %v", err)
	}
	return f
}

// TestRealm runs the tests of the realm's URL form, its options and its
// Close, each a subtest named after what it checks.
func (p Package[F, O]) TestRealm(t *testing.T) {
	tests := []struct {
		name string
		test func(*testing.T)
	}{
		{"OpenURL", p.testOpenURL},
		{"FenceTimingOption", p.testFenceTimingOption},
		{"CloseRemovesNewRealm", p.testCloseRemovesNewRealm},
		{"CloseKillsOpenHandles", p.testCloseKillsOpenHandles},
		{"CloseKeepsNamedRealm", p.testCloseKeepsNamedRealm},
		{"NewRealmFailureLeavesNothing", p.testNewRealmFailureLeavesNothing},
	}
	for _, c := range tests {
		t.Run(c.name, c.test)
	}
}

// testOpenURL checks that Scheme:PATH opens the realm at PATH, and that a
// URL without a file, with a '?' in its path, of another scheme or with no
// scheme is refused.
func (p Package[F, O]) testOpenURL(t *testing.T) {
	path := filepath.Join(t.TempDir(), "realm.db")
	f, err := p.OpenURL(t.Context(), p.Scheme+":"+path)
	if err != nil {
		t.Fatalf("OpenURL: %v", err)
	}
	if got := f.(F).Path(); got != path {
		t.Errorf("Path() = %q, want %q", got, path)
	}
	bad := []string{p.Scheme + ":", "postgres://x", p.Scheme + ":/a?b", path}
	for _, other := range p.OtherSchemes {
		bad = append(bad, other+":"+path)
	}
	for _, u := range bad {
		if _, err := p.OpenURL(t.Context(), u); err == nil {
			t.Errorf("OpenURL(%q) succeeded, want an error", u)
		}
	}
}

// testFenceTimingOption checks that WithFenceTiming sets the timing a
// handle declares and the lease it records, and that a zero timing and a
// zero busy timeout are refused.
func (p Package[F, O]) testFenceTimingOption(t *testing.T) {
	timing, err := hoststore.NewFenceTiming(time.Second, 3*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	f, err := p.NewRealm(t.Context(), t.TempDir(), p.WithFenceTiming(timing))
	if err != nil {
		t.Fatal(err)
	}
	s, err := f.Open(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	closer, ok := s.(io.Closer)
	if !ok {
		t.Fatalf("the handle %T has no Close", s)
	}
	defer func() {
		if err := closer.Close(); err != nil {
			t.Error(err)
		}
	}()
	if got := s.FenceTiming(); got != timing {
		t.Errorf("FenceTiming() = %s, want %s", got, timing)
	}
	if _, err := s.AcquireFence(t.Context(), hoststore.Exclusive); err != nil {
		t.Fatal(err)
	}
	_, err = s.AcquireFence(t.Context(), hoststore.Exclusive)
	var held *hoststore.HeldError
	if !errors.As(err, &held) || held.Remaining > 3*time.Second || held.Remaining <= 0 {
		t.Errorf("AcquireFence with a live 3 s lease = %v, want Held with 0 < remaining <= 3s", err)
	}
	for _, bad := range []O{p.WithFenceTiming(hoststore.FenceTiming{}), p.WithBusyTimeout(0)} {
		if _, err := p.NewRealm(t.Context(), t.TempDir(), bad); err == nil {
			t.Errorf("NewRealm with a bad option succeeded")
		}
	}
}

// TestConformance certifies the store with every chapter: conformant, and
// every row exercised (the in-store failpoints are in place).
func (p Package[F, O]) TestConformance(t *testing.T) {
	dir := t.TempDir()
	run := harness.Run(t, func(ctx context.Context) (hoststore.HostStoreFactory, error) {
		return p.NewRealm(ctx, dir)
	}, harness.WithStore(p.Name), harness.WithReportDir(t.TempDir()))
	if run == nil {
		t.Fatal("the run produced no report")
	}
	for _, row := range run.Selected() {
		if !row.Certified() {
			t.Errorf("row %s: %s, not exercised: %v", row.ID, row.Status, row.NotExercised)
		}
	}
}

// ref is the scope the Close tests write.
var ref = hoststore.ScopeRef{Kind: hoststore.KindRecord, Name: "closing"}

// write takes the fence on a new handle of f and commits one batch that
// creates ref with a head and a row, so that the realm's file and its
// write-ahead log really hold data. It returns the handle, still open.
func write(t *testing.T, f hoststore.HostStoreFactory) hoststore.HostStore {
	t.Helper()
	s, err := f.Open(t.Context())
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	g, err := s.AcquireFence(t.Context(), hoststore.Exclusive)
	if err != nil {
		t.Fatalf("AcquireFence: %v", err)
	}
	b, err := hoststore.NewCommitBatch("close-1", g.Token, []hoststore.ScopeUpdate{{
		Scope: ref, Next: hoststore.FirstVersion, Head: hoststore.Ptr([]byte("h")), Append: [][]byte{[]byte("r")},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Commit(t.Context(), b); err != nil {
		t.Fatalf("Commit: %v", err)
	}
	return s
}

// realmFiles returns the names in dir.
func realmFiles(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// testCloseRemovesNewRealm checks that Close of a realm NewRealm made, once
// its handle is killed, removes the database file and its companions (here
// also ones a dying process would leave behind), leaving its directory
// empty; that a second Close returns nil; and that a later Open returns
// *hoststore.UnavailableError.
func (p Package[F, O]) testCloseRemovesNewRealm(t *testing.T) {
	dir := t.TempDir()
	f, err := p.NewRealm(t.Context(), dir)
	if err != nil {
		t.Fatalf("NewRealm: %v", err)
	}
	s := write(t, f)
	if _, err := os.Stat(f.Path() + "-wal"); err != nil {
		t.Fatalf("the write-ahead log of a realm with a handle open: %v", err)
	}
	s.(hoststore.Killer).Kill()
	for _, suffix := range sqlitedb.Companions {
		if _, err := os.Stat(f.Path() + suffix); errors.Is(err, os.ErrNotExist) {
			if err := os.WriteFile(f.Path()+suffix, []byte("left behind"), 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := f.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if names := realmFiles(t, dir); len(names) != 0 {
		t.Errorf("after Close the realm's directory holds %q, want nothing", names)
	}
	if err := f.Close(); err != nil {
		t.Errorf("Close again: %v", err)
	}
	var un *hoststore.UnavailableError
	if s, err := f.Open(t.Context()); !errors.As(err, &un) {
		t.Errorf("Open after Close = %v, %v; want Unavailable", s, err)
	}
	if err := f.LapseFenceLeases(t.Context()); !errors.As(err, &un) {
		t.Errorf("LapseFenceLeases after Close = %v; want Unavailable", err)
	}
	if names := realmFiles(t, dir); len(names) != 0 {
		t.Errorf("calls after Close left %q in the realm's directory, want nothing", names)
	}
}

// testCloseKillsOpenHandles checks that Close kills a handle still open (a
// later call on it returns *hoststore.UnavailableError) and removes the
// realm's files all the same.
func (p Package[F, O]) testCloseKillsOpenHandles(t *testing.T) {
	dir := t.TempDir()
	f, err := p.NewRealm(t.Context(), dir)
	if err != nil {
		t.Fatalf("NewRealm: %v", err)
	}
	s := write(t, f)
	idle, err := f.Open(t.Context())
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	if err := f.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	var un *hoststore.UnavailableError
	for i, h := range []hoststore.HostStore{s, idle} {
		if head, err := h.LoadHead(t.Context(), ref); !errors.As(err, &un) {
			t.Errorf("handle %d: LoadHead after the factory's Close = %v, %v; want Unavailable", i, head, err)
		}
	}
	if names := realmFiles(t, dir); len(names) != 0 {
		t.Errorf("after Close the realm's directory holds %q, want nothing", names)
	}
}

// testCloseKeepsNamedRealm checks that Close of a realm opened by OpenURL
// removes nothing and returns nil, twice, and that the realm opened again
// holds what was committed.
func (p Package[F, O]) testCloseKeepsNamedRealm(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "named.db")
	f, err := p.OpenURL(t.Context(), p.Scheme+":"+path)
	if err != nil {
		t.Fatalf("OpenURL: %v", err)
	}
	s := write(t, f)
	if err := s.(io.Closer).Close(); err != nil {
		t.Fatal(err)
	}
	closer := f.(io.Closer)
	for i := range 2 {
		if err := closer.Close(); err != nil {
			t.Errorf("Close %d: %v", i+1, err)
		}
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("the named realm's file after Close: %v", err)
	}
	g, err := p.OpenURL(t.Context(), p.Scheme+":"+path)
	if err != nil {
		t.Fatalf("OpenURL again: %v", err)
	}
	defer func() {
		if err := g.(io.Closer).Close(); err != nil {
			t.Error(err)
		}
	}()
	s2, err := g.Open(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer s2.(hoststore.Killer).Kill()
	if head, err := s2.LoadHead(t.Context(), ref); err != nil || head == nil || head.Version != hoststore.FirstVersion {
		t.Errorf("LoadHead in the named realm after Close = %+v, %v; want version 1", head, err)
	}
}

// testNewRealmFailureLeavesNothing checks that a NewRealm refused for a bad
// option leaves no file in its directory.
func (p Package[F, O]) testNewRealmFailureLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	if _, err := p.NewRealm(t.Context(), dir, p.WithBusyTimeout(0)); err == nil {
		t.Fatal("NewRealm with a zero busy timeout succeeded")
	}
	if names := realmFiles(t, dir); len(names) != 0 {
		t.Errorf("a refused NewRealm left %q, want nothing", names)
	}
}
