// Package sqlitedbtest holds the tests that the stores built on package
// sqlitedb (stores/sqlite, stores/appendonly) run alike: their URL form,
// their options, and the whole conformance chapter. Each store's own tests
// call them with a Package describing the store.
package sqlitedbtest

import (
	"context"
	"errors"
	"io"
	"path/filepath"
	"testing"
	"time"

	"github.com/conform-spi/conform/harness"
	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/reports"
)

// Factory is what the tests need of a store's factory type.
type Factory interface {
	hoststore.HostStoreFactory
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

// TestOpenURL checks that Scheme:PATH opens the realm at PATH, and that a
// URL without a file, with a '?' in its path, of another scheme or with no
// scheme is refused.
func (p Package[F, O]) TestOpenURL(t *testing.T) {
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

// TestFenceTimingOption checks that WithFenceTiming sets the timing a
// handle declares and the lease it records, and that a zero timing and a
// zero busy timeout are refused.
func (p Package[F, O]) TestFenceTimingOption(t *testing.T) {
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
	var run *reports.Run
	harness.Run(t, func(ctx context.Context) (hoststore.HostStoreFactory, error) {
		return p.NewRealm(ctx, dir)
	}, harness.WithStore(p.Name), harness.WithReportDir(t.TempDir()), harness.WithResult(&run))
	if run == nil {
		t.Fatal("the run produced no report")
	}
	for _, row := range run.Rows {
		if !row.Certified() {
			t.Errorf("row %s: %s, not exercised: %v", row.ID, row.Status, row.NotExercised)
		}
	}
}
