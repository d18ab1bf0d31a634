package appendonly

import (
	"context"
	"io"
	"time"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/stores/internal/sqlitedb"
)

// URLScheme is the scheme of this store's URL form, appendonly+sqlite:PATH.
const URLScheme = "appendonly+sqlite"

// DefaultBusyTimeout is how long a connection waits for SQLite's write lock
// (busy_timeout) before an insert counts as busy and is retried.
const DefaultBusyTimeout = 5 * time.Second

// flavor is what sets this store apart in package sqlitedb: it runs no
// transaction, so the tables are created statement by statement.
var flavor = &sqlitedb.Flavor{
	Name:               "append-only store",
	DefaultBusyTimeout: DefaultBusyTimeout,
	Scheme:             URLScheme,
	RealmPattern:       "realm-*.appendonly.sqlite",
	Schema:             schema,
	SchemaNoun:         "tables",
}

// Option configures a Factory.
type Option func(*config) error

type config = sqlitedb.Config

// WithFenceTiming sets the fence timing the store declares and records
// leases with; the default is hoststore.DefaultFenceTiming. A zero
// (unconstructed) timing is refused.
func WithFenceTiming(t hoststore.FenceTiming) Option {
	return Option(flavor.WithFenceTiming(t))
}

// WithBusyTimeout sets SQLite's busy_timeout; the default is
// DefaultBusyTimeout. It must be at least one millisecond.
func WithBusyTimeout(d time.Duration) Option {
	return Option(flavor.WithBusyTimeout(d))
}

// Factory is one realm: one SQLite database file holding the append-only
// log. It implements hoststore.HostStoreFactory; every Open is a new handle
// with pools of its own. A Factory holds no connection between calls and is
// safe for concurrent use.
type Factory struct {
	file *sqlitedb.File
}

var (
	_ hoststore.HostStoreFactory = (*Factory)(nil)
	_ io.Closer                  = (*Factory)(nil)
)

// New returns the factory of the realm in the file at path, creating the
// file and its tables when absent (an existing file is used as it stands). The
// path must not contain '?' and must not start with "file:".
func New(ctx context.Context, path string, opts ...Option) (*Factory, error) {
	file, err := sqlitedb.New(ctx, flavor, path, opts)
	if err != nil {
		return nil, err
	}
	return &Factory{file: file}, nil
}

// NewRealm returns the factory of a fresh, empty realm in a new file inside dir
// (for example a test's t.TempDir()). The factory owns the file: Close removes
// it. A failed NewRealm leaves nothing in dir.
func NewRealm(ctx context.Context, dir string, opts ...Option) (*Factory, error) {
	file, err := sqlitedb.NewRealm(ctx, flavor, dir, opts)
	if err != nil {
		return nil, err
	}
	return &Factory{file: file}, nil
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

// ParseURL returns the file path of a URL of the form
// appendonly+sqlite:PATH or appendonly+sqlite://PATH.
func ParseURL(u string) (string, error) { return flavor.ParseURL(u) }

// Path returns the absolute path of the realm's database file.
func (f *Factory) Path() string { return f.file.Path() }

// FenceTiming returns the timing every handle of the realm declares.
func (f *Factory) FenceTiming() hoststore.FenceTiming { return f.file.Config().Timing }

// Close ends the factory: it kills every handle of the factory still open
// (as Store.Kill does; the harness closes its handles first) and makes later
// Opens return *hoststore.UnavailableError. When NewRealm made the realm,
// Close removes the database file and its companions (-wal, -shm,
// -journal); a file named to New or OpenURL stays. It returns the error of
// a removal that failed (a later Close tries again), else nil; Close after
// Close does nothing more.
func (f *Factory) Close() error { return f.file.Close() }

// schema is the tables of the log; see the package doc. No statement of
// the store updates or deletes a row of them.
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

// Open returns a new handle, a new process on the realm: new pools over the
// file that share nothing with earlier handles. It returns
// *hoststore.UnavailableError when the file cannot be opened or the factory is
// closed, or ctx.Err().
func (f *Factory) Open(ctx context.Context) (hoststore.HostStore, error) {
	return f.OpenStore(ctx)
}

// OpenStore returns what Open returns, as a *Store, for callers that want Kill
// and Close without a type assertion.
func (f *Factory) OpenStore(ctx context.Context) (*Store, error) {
	db, err := f.file.Open(ctx)
	if err != nil {
		return nil, err
	}
	return &Store{f: f, db: db}, nil
}

// LapseFenceLeases ends every recorded lease by appending a clock
// row whose offset puts "now" just past the latest recorded lease expiry
// (nothing sleeps). It returns *hoststore.UnavailableError or ctx.Err() on
// failure.
func (f *Factory) LapseFenceLeases(ctx context.Context) error {
	s, err := f.OpenStore(ctx)
	if err != nil {
		return err
	}
	return s.db.CloseAfter(s.lapse(ctx), "lapse fence leases")
}
