package sqlitedb

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/conform-spi/conform/hoststore"
)

var testFlavor = &Flavor{
	Name:               "test store",
	Scheme:             "x+sqlite",
	DefaultBusyTimeout: 5 * time.Second,
	RealmPattern:       "realm-*.sqlite",
	Schema:             `CREATE TABLE IF NOT EXISTS t (v INTEGER NOT NULL); INSERT INTO t (v) VALUES (1);`,
	SchemaNoun:         "schema",
	Transactional:      true,
}

func TestParseURL(t *testing.T) {
	for u, want := range map[string]string{"x+sqlite:a/b": "a/b", "x+sqlite:///a/b": "/a/b", "x+sqlite:/a": "/a"} {
		if got, err := testFlavor.ParseURL(u); err != nil || got != want {
			t.Errorf("ParseURL(%q) = %q, %v; want %q", u, got, err, want)
		}
	}
	for _, u := range []string{"x+sqlite:", "x+sqlite://", "sqlite:/a", "/a", ""} {
		if got, err := testFlavor.ParseURL(u); err == nil || !strings.HasPrefix(err.Error(), "test store: ") {
			t.Errorf("ParseURL(%q) = %q, %v; want an error of the test store", u, got, err)
		}
	}
}

func TestConfigure(t *testing.T) {
	cfg, err := Configure[func(*Config) error](testFlavor, nil)
	if err != nil || cfg.Timing != hoststore.DefaultFenceTiming() || cfg.BusyTimeout != 5*time.Second {
		t.Errorf("Configure() = %+v, %v; want the defaults", cfg, err)
	}
	timing, err := hoststore.NewFenceTiming(time.Second, 3*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err = Configure(testFlavor, []func(*Config) error{testFlavor.WithFenceTiming(timing), testFlavor.WithBusyTimeout(time.Millisecond)})
	if err != nil || cfg.Timing != timing || cfg.BusyTimeout != time.Millisecond {
		t.Errorf("Configure(timing, 1ms) = %+v, %v", cfg, err)
	}
	for _, bad := range []func(*Config) error{testFlavor.WithFenceTiming(hoststore.FenceTiming{}), testFlavor.WithBusyTimeout(time.Millisecond - 1)} {
		if _, err := Configure(testFlavor, []func(*Config) error{bad}); err == nil || !strings.HasPrefix(err.Error(), "test store: ") {
			t.Errorf("Configure with a bad option = %v, want an error of the test store", err)
		}
	}
}

func TestCreateRefusesPathsTheDriverWouldRead(t *testing.T) {
	for _, p := range []string{"", "a?b", "file:a"} {
		if _, err := testFlavor.Create(t.Context(), p, Config{BusyTimeout: time.Second}); err == nil {
			t.Errorf("Create(%q) succeeded, want an error", p)
		}
	}
}

// TestHandle opens a realm twice (the schema runs on an existing file as
// it stands), then checks a handle's calls before and after Close.
func TestHandle(t *testing.T) {
	ctx := t.Context()
	cfg := Config{Timing: hoststore.DefaultFenceTiming(), BusyTimeout: time.Second}
	dir := t.TempDir()
	name, err := testFlavor.NewRealmFile(dir)
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(name) != dir {
		t.Errorf("NewRealmFile(%q) = %q, want a file inside it", dir, name)
	}
	f, err := testFlavor.Create(ctx, name, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := testFlavor.Create(ctx, name, cfg); err != nil {
		t.Fatalf("Create over an existing realm: %v", err)
	}
	h, err := f.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var n int
	if err := h.Read.QueryRowContext(ctx, `SELECT COUNT(*) FROM t`).Scan(&n); err != nil || n != 2 {
		t.Errorf("rows of the schema's table = %d, %v; want 2 (one per Create)", n, err)
	}
	var inv *hoststore.InvalidError
	if _, _, err := h.Call(ctx, "probe", nil, errors.New("limit 0 is not positive")); !errors.As(err, &inv) || inv.Detail != "probe: limit 0 is not positive" {
		t.Errorf("Call with a bad argument = %v, want Invalid %q", err, "probe: limit 0 is not positive")
	}
	octx, done, err := h.Call(ctx, "probe")
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	done()
	if octx.Err() == nil {
		t.Error("a call's context outlived its end")
	}
	var un *hoststore.UnavailableError
	if _, _, err := h.Call(ctx, "probe"); !errors.As(err, &un) || !h.Done() || h.Killed() {
		t.Errorf("Call on a closed handle = %v (done %t, killed %t), want Unavailable", err, h.Done(), h.Killed())
	}
	if _, _, err := h.Call(ctx, "probe", errors.New("bad")); !errors.As(err, &inv) {
		t.Errorf("Call with a bad argument on a closed handle = %v, want Invalid first", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := h.Unavailable(cctx, "probe", errors.New("x")); !errors.Is(err, context.Canceled) {
		t.Errorf("Unavailable with an ended context = %v, want context.Canceled", err)
	}
}

// TestKillEndsCallsInFlight checks that Kill ends the context of a call
// under way, and that CloseAfter keeps the call's own error.
func TestKillEndsCallsInFlight(t *testing.T) {
	ctx := t.Context()
	f, err := testFlavor.Create(ctx, filepath.Join(t.TempDir(), "k.sqlite"), Config{BusyTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	h, err := f.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	octx, done, err := h.Call(ctx, "probe")
	if err != nil {
		t.Fatal(err)
	}
	defer done()
	h.Kill()
	<-octx.Done()
	if !h.Killed() || !h.Done() {
		t.Errorf("after Kill: killed %t, done %t", h.Killed(), h.Done())
	}
	g, err := f.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := errors.New("the call's own")
	if err := g.CloseAfter(want, "probe"); err != want {
		t.Errorf("CloseAfter = %v, want the call's error", err)
	}
}

// TestBusy holds SQLite's write lock in one handle's transaction: another
// handle's BEGIN IMMEDIATE meets it after busy_timeout, and that error is
// Busy and Described with its code; a plain error is neither.
func TestBusy(t *testing.T) {
	ctx := t.Context()
	f, err := testFlavor.Create(ctx, filepath.Join(t.TempDir(), "b.sqlite"), Config{BusyTimeout: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	a, err := f.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { a.Kill() }()
	b, err := f.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { b.Kill() }()
	tx, err := a.Write.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := tx.Rollback(); err != nil {
			t.Error(err)
		}
	}()
	_, err = b.Write.BeginTx(ctx, nil)
	if err == nil {
		t.Fatal("BEGIN IMMEDIATE beside a held write lock succeeded")
	}
	if !Busy(err) || !strings.Contains(Describe(err), "(sqlite code 5") {
		t.Errorf("BEGIN IMMEDIATE beside a held write lock = %v (%s): want busy, code 5", err, Describe(err))
	}
	if Busy(errors.New("database is locked")) || Describe(errors.New("plain")) != "plain" {
		t.Error("a plain error is Busy, or Described with more than its text")
	}
	if got := NonNil(nil); got == nil || len(got) != 0 {
		t.Errorf("NonNil(nil) = %#v, want an empty slice", got)
	}
}

// TestNewRealmRemovesFileOnSchemaError checks that a NewRealm whose schema
// fails removes the file it made, and that Close of a File made by Create
// leaves the file.
func TestNewRealmRemovesFileOnSchemaError(t *testing.T) {
	dir := t.TempDir()
	bad := *testFlavor
	bad.Schema = `CREATE TABLE t (v INTEGER NOT NULL); NOT SQL;`
	if _, err := NewRealm[func(*Config) error](t.Context(), &bad, dir, nil); err == nil {
		t.Fatal("NewRealm with a broken schema succeeded")
	}
	if entries, err := os.ReadDir(dir); err != nil || len(entries) != 0 {
		t.Errorf("a failed NewRealm left %v (%v), want nothing", entries, err)
	}
	path := filepath.Join(dir, "named.sqlite")
	f, err := testFlavor.Create(t.Context(), path, Config{BusyTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil || f.Owned() {
		t.Fatalf("Close of a named file = %v (owned %t), want nil", err, f.Owned())
	}
	if _, err := os.Stat(path); err != nil {
		t.Errorf("Close removed a named file: %v", err)
	}
}
