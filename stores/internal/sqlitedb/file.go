// Package sqlitedb is what the two SQLite-backed stores (stores/sqlite and
// stores/appendonly) share: a realm's file with its options, URL form and
// schema, and a handle's pair of pools over it (a read pool, and a write
// pool of one connection), with Kill, Close and the mapping of driver errors
// onto the contract. Each store keeps its own tables, commit protocol and
// load resolution; a Flavor says how a store differs here.
//
// The file runs in journal_mode=WAL with synchronous=FULL (a write that
// returned nil survives a crash of the process and of the machine), and
// busy_timeout makes a connection wait for SQLite's write lock instead of
// failing at once. It is opened through modernc.org/sqlite (pure Go, driver
// name "sqlite").
package sqlitedb

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
	"github.com/conform-spi/conform/stores/internal/handles"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// Flavor is what sets one store apart at this level. Its fields are fixed
// by the store; a Flavor is safe for concurrent use.
type Flavor struct {
	// Name begins every error this package makes for the store, as in
	// "sqlite store: close: …".
	Name string
	// Scheme is the scheme of the store's URL form, Scheme:PATH.
	Scheme string
	// DefaultBusyTimeout is how long a connection waits for SQLite's write
	// lock (busy_timeout) when no option sets it.
	DefaultBusyTimeout time.Duration
	// RealmPattern is the os.CreateTemp pattern of NewRealmFile's files.
	RealmPattern string
	// Schema creates the store's tables when absent; it runs on every
	// Create.
	Schema string
	// SchemaNoun names the schema in the error of a failed creation
	// ("create schema in …", "create tables in …").
	SchemaNoun string
	// Transactional makes the write pool's BeginTx start BEGIN IMMEDIATE,
	// and runs Schema in one such transaction. Without it Schema's
	// statements run one by one, each in its own autocommit.
	Transactional bool
}

// Config is what a store's options set.
type Config struct {
	// Timing is the fence timing the store declares and records leases
	// with.
	Timing hoststore.FenceTiming
	// BusyTimeout is SQLite's busy_timeout.
	BusyTimeout time.Duration
}

// Configure returns the default Config (hoststore.DefaultFenceTiming and
// fl.DefaultBusyTimeout) with opts applied in order, or the first option's
// error.
func Configure[O ~func(*Config) error](fl *Flavor, opts []O) (Config, error) {
	cfg := Config{Timing: hoststore.DefaultFenceTiming(), BusyTimeout: fl.DefaultBusyTimeout}
	for _, o := range opts {
		if err := o(&cfg); err != nil {
			return Config{}, err
		}
	}
	return cfg, nil
}

// WithFenceTiming is the option that sets Config.Timing; a zero
// (unconstructed) timing is refused.
func (fl *Flavor) WithFenceTiming(t hoststore.FenceTiming) func(*Config) error {
	return func(c *Config) error {
		if !t.Valid() {
			return fmt.Errorf("%s: fence timing is not valid (build it with hoststore.NewFenceTiming)", fl.Name)
		}
		c.Timing = t
		return nil
	}
}

// WithBusyTimeout is the option that sets Config.BusyTimeout; below one
// millisecond is refused.
func (fl *Flavor) WithBusyTimeout(d time.Duration) func(*Config) error {
	return func(c *Config) error {
		if d < time.Millisecond {
			return fmt.Errorf("%s: busy timeout %s is below one millisecond", fl.Name, d)
		}
		c.BusyTimeout = d
		return nil
	}
}

// ParseURL returns the file path of a URL of the form Scheme:PATH or
// Scheme://PATH; an empty PATH is refused.
func (fl *Flavor) ParseURL(u string) (string, error) {
	rest, ok := strings.CutPrefix(u, fl.Scheme+":")
	if !ok {
		return "", fmt.Errorf("%s: url %q does not start with %q", fl.Name, u, fl.Scheme+":")
	}
	if p, ok := strings.CutPrefix(rest, "//"); ok {
		rest = p
	}
	if rest == "" {
		return "", fmt.Errorf("%s: url %q names no file", fl.Name, u)
	}
	return rest, nil
}

// NewRealmFile creates a new, empty file inside dir, named after
// RealmPattern, and returns its path.
func (fl *Flavor) NewRealmFile(dir string) (string, error) {
	file, err := os.CreateTemp(dir, fl.RealmPattern)
	if err != nil {
		return "", fmt.Errorf("%s: new realm in %q: %w", fl.Name, dir, err)
	}
	name := file.Name()
	if err := file.Close(); err != nil {
		return "", fmt.Errorf("%s: new realm %q: %w", fl.Name, name, err)
	}
	return name, nil
}

// NewRealm makes a fresh, empty realm in a new file inside dir (see
// NewRealmFile) with opts applied (see Configure). The File owns that file:
// Close removes it. The options are checked before the file is made, and a
// file whose schema cannot be created is removed again, so a failed
// NewRealm leaves nothing in dir.
func NewRealm[O ~func(*Config) error](ctx context.Context, fl *Flavor, dir string, opts []O) (*File, error) {
	cfg, err := Configure(fl, opts)
	if err != nil {
		return nil, err
	}
	name, err := fl.NewRealmFile(dir)
	if err != nil {
		return nil, err
	}
	f, err := fl.Create(ctx, name, cfg)
	if err != nil {
		return nil, errors.Join(err, removeFiles(fl, name))
	}
	f.owned = true
	return f, nil
}

// Companions are the suffixes of the files SQLite keeps beside a database
// file: the write-ahead log, its shared-memory index, and the rollback
// journal.
var Companions = []string{"-wal", "-shm", "-journal"}

// removeFiles removes the database file at path and its companions; a file
// that is already gone is no error.
func removeFiles(fl *Flavor, path string) error {
	var errs []error
	for _, suffix := range append([]string{""}, Companions...) {
		if err := os.Remove(path + suffix); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("%s: remove realm %q: %w", fl.Name, path, err)
	}
	return nil
}

// File is one realm's database file and the options every handle opens it
// with. It holds no connection between calls and is safe for concurrent
// use.
type File struct {
	flavor *Flavor
	path   string
	cfg    Config
	owned  bool // made by NewRealm: Close removes the file

	handles handles.Set[*Handle]
}

// New returns the File at path with opts applied (see Configure), creating
// the file and its schema when absent: it is Configure, then Create.
func New[O ~func(*Config) error](ctx context.Context, fl *Flavor, path string, opts []O) (*File, error) {
	cfg, err := Configure(fl, opts)
	if err != nil {
		return nil, err
	}
	return fl.Create(ctx, path, cfg)
}

// Create returns the File at path, creating the file and its schema when
// absent (an existing file is used as it stands). The path must not be
// empty, contain '?' or start with "file:"; it is made absolute.
func (fl *Flavor) Create(ctx context.Context, path string, cfg Config) (*File, error) {
	if path == "" || strings.ContainsRune(path, '?') || strings.HasPrefix(path, "file:") {
		return nil, fmt.Errorf("%s: path %q is empty, contains '?' or starts with \"file:\"", fl.Name, path)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("%s: path %q: %w", fl.Name, path, err)
	}
	f := &File{flavor: fl, path: abs, cfg: cfg}
	if err := f.createSchema(ctx); err != nil {
		return nil, err
	}
	return f, nil
}

// Path is the absolute path of the database file.
func (f *File) Path() string { return f.path }

// Config is the options the File was created with.
func (f *File) Config() Config { return f.cfg }

// Owned reports whether NewRealm made the file, so that Close removes it.
func (f *File) Owned() bool { return f.owned }

// Close ends the realm's use through f. It kills every handle of f still
// open, as Handle.Kill does (a call in flight on one is cancelled), and
// makes later Opens return *hoststore.UnavailableError. When NewRealm made
// the file, Close then removes it and its companions (see Companions); a
// file named to New or Create stays as it is. Close returns the error of a
// removal that failed, and a later Close tries the removal again; otherwise
// it returns nil, and a second Close does nothing more.
func (f *File) Close() error {
	f.handles.Close()
	if !f.owned {
		return nil
	}
	return removeFiles(f.flavor, f.path)
}

// dsn is the driver's data source name: the plain path, then the pragmas
// every connection runs. immediate makes BeginTx start BEGIN IMMEDIATE.
func (f *File) dsn(immediate bool) string {
	q := url.Values{}
	q.Set("_busy_timeout", strconv.FormatInt(f.cfg.BusyTimeout.Milliseconds(), 10))
	q.Set("_journal_mode", "WAL")
	q.Set("_synchronous", "FULL")
	if immediate {
		q.Set("_txlock", "immediate")
	}
	return f.path + "?" + q.Encode()
}

func (f *File) createSchema(ctx context.Context) error {
	fl := f.flavor
	db, err := sql.Open("sqlite", f.dsn(fl.Transactional))
	if err != nil {
		return fmt.Errorf("%s: open %q: %w", fl.Name, f.path, err)
	}
	if fl.Transactional {
		err = execInTx(ctx, db, fl.Schema)
	} else {
		_, err = db.ExecContext(ctx, fl.Schema)
	}
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("%s: create %s in %q: %w", fl.Name, fl.SchemaNoun, f.path, err)
	}
	return nil
}

// execInTx runs script in one transaction of db.
func execInTx(ctx context.Context, db *sql.DB, script string) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, script); err != nil {
		return errors.Join(err, tx.Rollback())
	}
	return tx.Commit()
}
