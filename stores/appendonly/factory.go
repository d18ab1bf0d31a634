package appendonly

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/conform-spi/conform/hoststore"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// URLScheme is the scheme of this store's URL form, appendonly+sqlite:PATH.
const URLScheme = "appendonly+sqlite"

// DefaultBusyTimeout is how long a connection waits for SQLite's write lock
// (busy_timeout) before an insert counts as busy and is retried.
const DefaultBusyTimeout = 5 * time.Second

// Option configures a Factory.
type Option func(*config) error

type config struct {
	timing      hoststore.FenceTiming
	busyTimeout time.Duration
}

// WithFenceTiming sets the fence timing the store declares and records
// leases with; the default is hoststore.DefaultFenceTiming. A zero
// (unconstructed) timing is refused.
func WithFenceTiming(t hoststore.FenceTiming) Option {
	return func(c *config) error {
		if !t.Valid() {
			return errors.New("append-only store: fence timing is not valid (build it with hoststore.NewFenceTiming)")
		}
		c.timing = t
		return nil
	}
}

// WithBusyTimeout sets SQLite's busy_timeout; the default is
// DefaultBusyTimeout. It must be at least one millisecond.
func WithBusyTimeout(d time.Duration) Option {
	return func(c *config) error {
		if d < time.Millisecond {
			return fmt.Errorf("append-only store: busy timeout %s is below one millisecond", d)
		}
		c.busyTimeout = d
		return nil
	}
}

// Factory is one realm: one SQLite database file holding the append-only
// log. It implements hoststore.HostStoreFactory; every Open is a new handle
// with pools of its own. A Factory holds no connection between calls and is
// safe for concurrent use.
type Factory struct {
	path string
	cfg  config
}

var _ hoststore.HostStoreFactory = (*Factory)(nil)

// New makes the factory of the realm in the file at path, creating the file
// and its tables when absent (an existing file is used as it stands). The
// path must not contain '?' and must not start with "file:".
func New(ctx context.Context, path string, opts ...Option) (*Factory, error) {
	cfg := config{timing: hoststore.DefaultFenceTiming(), busyTimeout: DefaultBusyTimeout}
	for _, o := range opts {
		if err := o(&cfg); err != nil {
			return nil, err
		}
	}
	if path == "" || strings.ContainsRune(path, '?') || strings.HasPrefix(path, "file:") {
		return nil, fmt.Errorf("append-only store: path %q is empty, contains '?' or starts with \"file:\"", path)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("append-only store: path %q: %w", path, err)
	}
	f := &Factory{path: abs, cfg: cfg}
	if err := f.createSchema(ctx); err != nil {
		return nil, err
	}
	return f, nil
}

// NewRealm makes a fresh, empty realm in a new file inside dir (for example
// a test's t.TempDir()).
func NewRealm(ctx context.Context, dir string, opts ...Option) (*Factory, error) {
	file, err := os.CreateTemp(dir, "realm-*.appendonly.sqlite")
	if err != nil {
		return nil, fmt.Errorf("append-only store: new realm in %q: %w", dir, err)
	}
	name := file.Name()
	if err := file.Close(); err != nil {
		return nil, fmt.Errorf("append-only store: new realm %q: %w", name, err)
	}
	return New(ctx, name, opts...)
}

// OpenURL opens the realm that url names, in the form appendonly+sqlite:PATH
// (also appendonly+sqlite://PATH for an absolute PATH), with the default
// options.
func OpenURL(ctx context.Context, url string) (hoststore.HostStoreFactory, error) {
	path, err := ParseURL(url)
	if err != nil {
		return nil, err
	}
	return New(ctx, path)
}

// ParseURL answers the file path of a URL of the form
// appendonly+sqlite:PATH or appendonly+sqlite://PATH.
func ParseURL(u string) (string, error) {
	rest, ok := strings.CutPrefix(u, URLScheme+":")
	if !ok {
		return "", fmt.Errorf("append-only store: url %q does not start with %q", u, URLScheme+":")
	}
	if p, ok := strings.CutPrefix(rest, "//"); ok {
		rest = p
	}
	if rest == "" {
		return "", fmt.Errorf("append-only store: url %q names no file", u)
	}
	return rest, nil
}

// Path is the absolute path of the realm's database file.
func (f *Factory) Path() string { return f.path }

// FenceTiming is the timing every handle of the realm declares.
func (f *Factory) FenceTiming() hoststore.FenceTiming { return f.cfg.timing }

// dsn is the driver's data source name: the plain path, then the pragmas
// every connection runs.
func (f *Factory) dsn() string {
	q := url.Values{}
	q.Set("_busy_timeout", strconv.FormatInt(f.cfg.busyTimeout.Milliseconds(), 10))
	q.Set("_journal_mode", "WAL")
	q.Set("_synchronous", "FULL")
	return f.path + "?" + q.Encode()
}

// The tables of the log; see the package doc. No statement of the store
// updates or deletes a row of them.
const schema = `
CREATE TABLE IF NOT EXISTS updates_log (
	commit_id TEXT NOT NULL,
	kind INTEGER NOT NULL,
	name BLOB NOT NULL,
	previous INTEGER,
	next INTEGER NOT NULL,
	has_head INTEGER NOT NULL,
	truncate_after INTEGER,
	drop_before INTEGER,
	deleted INTEGER NOT NULL,
	appended INTEGER NOT NULL,
	head BLOB
);
CREATE INDEX IF NOT EXISTS updates_log_commit ON updates_log (commit_id, kind, name);
CREATE INDEX IF NOT EXISTS updates_log_scope ON updates_log (kind, name, commit_id);
CREATE TABLE IF NOT EXISTS rows_log (
	commit_id TEXT NOT NULL,
	kind INTEGER NOT NULL,
	name BLOB NOT NULL,
	idx INTEGER NOT NULL,
	data BLOB
);
CREATE INDEX IF NOT EXISTS rows_log_scope ON rows_log (kind, name, commit_id, idx);
CREATE TABLE IF NOT EXISTS markers (
	seq INTEGER PRIMARY KEY,
	commit_id TEXT NOT NULL,
	token INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS markers_commit ON markers (commit_id);
CREATE TABLE IF NOT EXISTS fences (
	seq INTEGER PRIMARY KEY,
	token INTEGER NOT NULL,
	kind TEXT NOT NULL,
	lease_expiry INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS fences_token ON fences (token, lease_expiry);
CREATE TABLE IF NOT EXISTS clock (
	seq INTEGER PRIMARY KEY AUTOINCREMENT,
	offset_ns INTEGER NOT NULL
);
`

func (f *Factory) createSchema(ctx context.Context) error {
	db, err := sql.Open("sqlite", f.dsn())
	if err != nil {
		return fmt.Errorf("append-only store: open %q: %w", f.path, err)
	}
	_, err = db.ExecContext(ctx, schema)
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("append-only store: create tables in %q: %w", f.path, err)
	}
	return nil
}

// Open is a new process over the realm: new pools over the file that share
// nothing with earlier handles. It answers *hoststore.UnavailableError when
// the file cannot be opened, or ctx.Err().
func (f *Factory) Open(ctx context.Context) (hoststore.HostStore, error) {
	return f.OpenStore(ctx)
}

// OpenStore is Open with the concrete type, for callers that want Kill and
// Close without a type assertion.
func (f *Factory) OpenStore(ctx context.Context) (*Store, error) {
	return openStore(ctx, f)
}

// LapseFenceLeases lets every recorded lease run out by appending a clock
// row whose offset puts "now" just past the latest recorded lease expiry
// (nothing sleeps). It answers *hoststore.UnavailableError or ctx.Err() on
// failure.
func (f *Factory) LapseFenceLeases(ctx context.Context) error {
	s, err := f.OpenStore(ctx)
	if err != nil {
		return err
	}
	err = s.lapse(ctx)
	if cerr := s.Close(); err == nil && cerr != nil {
		err = &hoststore.UnavailableError{Detail: "lapse fence leases: close: " + cerr.Error()}
	}
	return err
}
