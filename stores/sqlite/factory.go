package sqlite

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

// URLScheme is the scheme of this store's URL form, sqlite:PATH.
const URLScheme = "sqlite"

// DefaultBusyTimeout is how long a connection waits for SQLite's write lock
// (busy_timeout) before the call answers *hoststore.UnavailableError.
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
			return errors.New("sqlite store: fence timing is not valid (build it with hoststore.NewFenceTiming)")
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
			return fmt.Errorf("sqlite store: busy timeout %s is below one millisecond", d)
		}
		c.busyTimeout = d
		return nil
	}
}

// Factory is one realm: one SQLite database file. It implements
// hoststore.HostStoreFactory; every Open is a new handle with pools of its
// own. A Factory holds no connection between calls and is safe for
// concurrent use.
type Factory struct {
	path string
	cfg  config
}

var _ hoststore.HostStoreFactory = (*Factory)(nil)

// New makes the factory of the realm in the file at path, creating the file
// and its schema when absent (an existing file is used as it stands). The
// path must not contain '?' and must not start with "file:".
func New(ctx context.Context, path string, opts ...Option) (*Factory, error) {
	cfg := config{timing: hoststore.DefaultFenceTiming(), busyTimeout: DefaultBusyTimeout}
	for _, o := range opts {
		if err := o(&cfg); err != nil {
			return nil, err
		}
	}
	if path == "" || strings.ContainsRune(path, '?') || strings.HasPrefix(path, "file:") {
		return nil, fmt.Errorf("sqlite store: path %q is empty, contains '?' or starts with \"file:\"", path)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("sqlite store: path %q: %w", path, err)
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
	file, err := os.CreateTemp(dir, "realm-*.sqlite")
	if err != nil {
		return nil, fmt.Errorf("sqlite store: new realm in %q: %w", dir, err)
	}
	name := file.Name()
	if err := file.Close(); err != nil {
		return nil, fmt.Errorf("sqlite store: new realm %q: %w", name, err)
	}
	return New(ctx, name, opts...)
}

// OpenURL opens the realm that url names, in the form sqlite:PATH (also
// sqlite://PATH for an absolute PATH), with the default options.
func OpenURL(ctx context.Context, url string) (hoststore.HostStoreFactory, error) {
	path, err := ParseURL(url)
	if err != nil {
		return nil, err
	}
	return New(ctx, path)
}

// ParseURL answers the file path of a URL of the form sqlite:PATH or
// sqlite://PATH.
func ParseURL(u string) (string, error) {
	rest, ok := strings.CutPrefix(u, URLScheme+":")
	if !ok {
		return "", fmt.Errorf("sqlite store: url %q does not start with %q", u, URLScheme+":")
	}
	if p, ok := strings.CutPrefix(rest, "//"); ok {
		rest = p
	}
	if rest == "" {
		return "", fmt.Errorf("sqlite store: url %q names no file", u)
	}
	return rest, nil
}

// Path is the absolute path of the realm's database file.
func (f *Factory) Path() string { return f.path }

// FenceTiming is the timing every handle of the realm declares.
func (f *Factory) FenceTiming() hoststore.FenceTiming { return f.cfg.timing }

// dsn is the driver's data source name: the plain path, then the pragmas
// every connection runs. immediate makes BeginTx start BEGIN IMMEDIATE.
func (f *Factory) dsn(immediate bool) string {
	q := url.Values{}
	q.Set("_busy_timeout", strconv.FormatInt(f.cfg.busyTimeout.Milliseconds(), 10))
	q.Set("_journal_mode", "WAL")
	q.Set("_synchronous", "FULL")
	if immediate {
		q.Set("_txlock", "immediate")
	}
	return f.path + "?" + q.Encode()
}

const schema = `
CREATE TABLE IF NOT EXISTS scopes (
	kind INTEGER NOT NULL,
	name BLOB NOT NULL,
	version INTEGER NOT NULL,
	commit_id TEXT NOT NULL,
	deleted INTEGER NOT NULL,
	start_idx INTEGER NOT NULL,
	end_idx INTEGER NOT NULL,
	head BLOB,
	PRIMARY KEY (kind, name)
);
CREATE TABLE IF NOT EXISTS rows (
	kind INTEGER NOT NULL,
	name BLOB NOT NULL,
	idx INTEGER NOT NULL,
	data BLOB,
	PRIMARY KEY (kind, name, idx)
);
CREATE TABLE IF NOT EXISTS commits (commit_id TEXT PRIMARY KEY) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS fence (
	id INTEGER PRIMARY KEY CHECK (id = 1),
	token INTEGER NOT NULL,
	lease_expiry INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS clock (
	id INTEGER PRIMARY KEY CHECK (id = 1),
	offset_ns INTEGER NOT NULL
);
INSERT OR IGNORE INTO fence (id, token, lease_expiry) VALUES (1, 0, 0);
INSERT OR IGNORE INTO clock (id, offset_ns) VALUES (1, 0);
`

func (f *Factory) createSchema(ctx context.Context) error {
	db, err := sql.Open("sqlite", f.dsn(true))
	if err != nil {
		return fmt.Errorf("sqlite store: open %q: %w", f.path, err)
	}
	tx, err := db.BeginTx(ctx, nil)
	if err == nil {
		if _, err = tx.ExecContext(ctx, schema); err != nil {
			err = errors.Join(err, tx.Rollback())
		} else {
			err = tx.Commit()
		}
	}
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("sqlite store: create schema in %q: %w", f.path, err)
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

// LapseFenceLeases lets every recorded lease run out by moving the realm's
// clock offset just past the recorded lease's expiry (nothing sleeps). It
// answers *hoststore.UnavailableError or ctx.Err() on failure.
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
