package postgres

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/stores/internal/handles"
)

// URL parameters this store reads and removes before connecting.
const (
	// ParamRealm names the realm (realm=NAME).
	ParamRealm = "realm"
	// ParamMaxConns bounds each handle's connections (pool_max_conns=N).
	ParamMaxConns = "pool_max_conns"
	// ParamRenew sets the renew interval (fence_renew=10s, a Go duration).
	ParamRenew = "fence_renew"
	// ParamLease sets the lease (fence_lease=30s, a Go duration).
	ParamLease = "fence_lease"
)

// DefaultMaxConns is how many connections one handle opens at most.
const DefaultMaxConns = 32

// runtimeDefaults are session settings the store sets unless the URL sets
// them. Every statement of the store is a prepared lookup by primary key
// prefix, whose generic plan is the right one; forcing it skips planning on
// every execution, which halves the server's CPU per commit.
var runtimeDefaults = map[string]string{
	"application_name": "conform-postgres",
	"plan_cache_mode":  "force_generic_plan",
}

// MaxRealmBytes bounds a realm id.
const MaxRealmBytes = 128

// Config says which realm a Factory serves and how its handles behave.
type Config struct {
	// URL is a libpq URL (postgres:// or postgresql://) without the
	// parameters of this package; see OpenURL.
	URL string
	// Realm is the realm id: 1..MaxRealmBytes bytes of UTF-8 without
	// control characters.
	Realm string
	// Timing is the fence timing the store declares and records leases
	// with; the zero value means hoststore.DefaultFenceTiming().
	Timing hoststore.FenceTiming
	// MaxConns bounds each handle's connections; zero means DefaultMaxConns.
	MaxConns int
}

// Factory is one realm in one PostgreSQL database. It implements
// hoststore.HostStoreFactory: every Open is a new handle with a connection
// pool of its own. A Factory holds no connection between calls and is safe
// for concurrent use.
type Factory struct {
	conn     *pgx.ConnConfig
	realm    string
	timing   hoststore.FenceTiming
	maxConns int
	lockKey  int64 // the realm's fence lock key; see the package doc
	owned    bool  // the realm id is random, made here: Close deletes the realm

	stores handles.Set[*Store] // the handles neither killed nor closed

	closing sync.Mutex // serialises Close's delete
	dropped bool       // Close deleted the realm
}

var (
	_ hoststore.HostStoreFactory = (*Factory)(nil)
	_ io.Closer                  = (*Factory)(nil)
)

// CloseTimeout bounds the transaction in which Close deletes a realm that
// NewRealm made.
const CloseTimeout = 10 * time.Second

// New returns the factory of cfg's realm: it creates the shared tables when
// absent (once per database, under an advisory lock) and the realm's own
// rows when absent. An existing realm is used as it stands, and Close
// leaves the realm in place.
func New(ctx context.Context, cfg Config) (*Factory, error) {
	return newFactory(ctx, cfg, false)
}

// newFactory is New; owned says that the realm id was made here, at
// random, so that Close deletes the realm.
func newFactory(ctx context.Context, cfg Config, owned bool) (*Factory, error) {
	if err := checkRealm(cfg.Realm); err != nil {
		return nil, err
	}
	if cfg.Timing == (hoststore.FenceTiming{}) {
		cfg.Timing = hoststore.DefaultFenceTiming()
	} else if !cfg.Timing.Valid() {
		return nil, errors.New("postgres store: fence timing is not valid (build it with hoststore.NewFenceTiming)")
	}
	switch {
	case cfg.MaxConns == 0:
		cfg.MaxConns = DefaultMaxConns
	case cfg.MaxConns < 1:
		return nil, fmt.Errorf("postgres store: max conns %d is below one", cfg.MaxConns)
	}
	cc, err := pgx.ParseConfig(cfg.URL)
	if err != nil {
		return nil, fmt.Errorf("postgres store: %w", err)
	}
	for k, v := range runtimeDefaults {
		if _, ok := cc.RuntimeParams[k]; !ok {
			cc.RuntimeParams[k] = v
		}
	}
	f := &Factory{conn: cc, realm: cfg.Realm, timing: cfg.Timing, maxConns: cfg.MaxConns, lockKey: fenceLockKey(cfg.Realm), owned: owned}
	if err := f.setup(ctx); err != nil {
		return nil, err
	}
	return f, nil
}

// NewRealm returns a factory over a fresh, empty realm with a random id in the
// database that url names (the form of OpenURL; a realm parameter there is
// refused, since the realm is made here). The factory owns the realm: Close
// deletes it.
func NewRealm(ctx context.Context, url string) (*Factory, error) {
	cfg, err := ParseURL(url)
	if err != nil {
		return nil, err
	}
	if cfg.Realm != "" {
		return nil, fmt.Errorf("postgres store: NewRealm makes its own realm; the url names realm %q", cfg.Realm)
	}
	cfg.Realm = RandomRealm()
	return newFactory(ctx, cfg, true)
}

// RandomRealm returns a fresh random realm id ("r-" and 32 hex digits).
func RandomRealm() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (it panics instead)
	return "r-" + hex.EncodeToString(b[:])
}

// OpenURL opens the realm that url names, as the conform command does. The form
// is a libpq URL with this store's parameters added, which are removed before
// connecting:
//
//	postgres://USER@HOST:PORT/DB?sslmode=disable&realm=NAME
//	  [&pool_max_conns=N][&fence_renew=10s&fence_lease=30s]
//
// Without realm, a fresh random realm is made (as NewRealm does, and Close
// deletes it), so that every run starts on an empty realm; a realm named
// there is left in place by Close. fence_renew and fence_lease go together
// and build the timing with hoststore.NewFenceTiming.
func OpenURL(ctx context.Context, url string) (hoststore.HostStoreFactory, error) {
	cfg, err := ParseURL(url)
	if err != nil {
		return nil, err
	}
	if cfg.Realm == "" {
		cfg.Realm = RandomRealm()
		return newFactory(ctx, cfg, true)
	}
	return New(ctx, cfg)
}

// ParseURL splits a URL of OpenURL's form into a Config. Realm is empty when
// the URL names none.
func ParseURL(raw string) (Config, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return Config{}, fmt.Errorf("postgres store: url: %w", err)
	}
	if u.Scheme != "postgres" && u.Scheme != "postgresql" {
		return Config{}, fmt.Errorf("postgres store: url scheme %q is not postgres or postgresql", u.Scheme)
	}
	q := u.Query()
	cfg := Config{Realm: q.Get(ParamRealm)}
	if _, ok := q[ParamRealm]; ok && cfg.Realm == "" {
		return Config{}, errors.New("postgres store: url: realm is empty")
	}
	if s := q.Get(ParamMaxConns); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return Config{}, fmt.Errorf("postgres store: url: %s=%q is not a positive integer", ParamMaxConns, s)
		}
		cfg.MaxConns = n
	}
	renew, lease := q.Get(ParamRenew), q.Get(ParamLease)
	if (renew == "") != (lease == "") {
		return Config{}, fmt.Errorf("postgres store: url: %s and %s go together", ParamRenew, ParamLease)
	}
	if renew != "" {
		r, err1 := time.ParseDuration(renew)
		l, err2 := time.ParseDuration(lease)
		if err := errors.Join(err1, err2); err != nil {
			return Config{}, fmt.Errorf("postgres store: url: %w", err)
		}
		if cfg.Timing, err = hoststore.NewFenceTiming(r, l); err != nil {
			return Config{}, fmt.Errorf("postgres store: url: %w", err)
		}
	}
	for _, k := range []string{ParamRealm, ParamMaxConns, ParamRenew, ParamLease} {
		q.Del(k)
	}
	u.RawQuery = q.Encode()
	cfg.URL = u.String()
	return cfg, nil
}

func checkRealm(r string) error {
	if r == "" || len(r) > MaxRealmBytes || !utf8.ValidString(r) || strings.IndexFunc(r, unicode.IsControl) >= 0 {
		return fmt.Errorf("postgres store: realm %q is empty, over %d bytes, not UTF-8 or has a control character", r, MaxRealmBytes)
	}
	return nil
}

// Realm returns the realm id this factory serves.
func (f *Factory) Realm() string { return f.realm }

// FenceTiming returns the timing the factory's handles declare.
func (f *Factory) FenceTiming() hoststore.FenceTiming { return f.timing }

// Open returns a new handle, a new process on the realm, with a connection
// pool of its own; it shares nothing with earlier handles. It dials nothing
// until the first call. After Close it returns *hoststore.UnavailableError.
func (f *Factory) Open(ctx context.Context) (hoststore.HostStore, error) {
	return f.OpenStore(ctx)
}

// OpenStore returns what Open returns, as a *Store.
func (f *Factory) OpenStore(ctx context.Context) (*Store, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s := &Store{f: f, pool: newPool(f.conn.Copy(), f.maxConns)}
	if !f.stores.Add(s) {
		return nil, &hoststore.UnavailableError{Detail: fmt.Sprintf("postgres open: realm %s: the factory is closed", f.realm)}
	}
	return s, nil
}

// Owned reports whether the factory made its realm (NewRealm, or OpenURL
// without a realm), so that Close deletes it.
func (f *Factory) Owned() bool { return f.owned }

// Close ends the factory. It kills every handle of the factory still open,
// as Store.Kill does (the harness closes its handles first), and makes
// later Opens return *hoststore.UnavailableError. When the factory made its
// realm (see Owned), Close then deletes every row of the realm, as Drop
// does, in one transaction bounded by CloseTimeout; a realm the caller named
// (Config.Realm, or realm=NAME in OpenURL's url) is left as it stands. It
// returns the error of a delete that failed, and a later Close tries again;
// after a Close that returned nil, Close does nothing and returns nil.
func (f *Factory) Close() error {
	f.stores.Close()
	if !f.owned {
		return nil
	}
	f.closing.Lock()
	defer f.closing.Unlock()
	if f.dropped {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), CloseTimeout)
	defer cancel()
	if err := f.Drop(ctx); err != nil {
		return err
	}
	f.dropped = true
	return nil
}

// LapseFenceLeases ends every recorded lease of the realm by moving
// the realm's clock offset (which every lease reading adds to the database
// clock) just past the recorded lease's expiry. It never moves it back. It
// is one step with respect to AcquireFence and RenewFence: its transaction
// first takes the realm's fence lock exclusively, as AcquireFence does, and
// reads the recorded lease only in a later statement (see the package doc).
func (f *Factory) LapseFenceLeases(ctx context.Context) error {
	return f.withConn(ctx, func(c *pgx.Conn) error {
		return pgx.BeginFunc(ctx, c, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, f.lockKey); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, sqlLapse, f.realm)
			return err
		})
	})
}

// Drop deletes every row of the realm, its fence and clock included, in one
// transaction; the shared tables stay. It first locks the realm's scope rows
// in the order commits lock theirs, then takes the realm's fence lock in
// exclusive mode, as AcquireFence does, and deletes after that (see the
// package doc): a commit in flight on a handle still open either landed
// before the delete, which removes its rows, or applies nothing, since its
// fence check finds no fence row. A handle still open over the realm must
// not be used afterwards.
func (f *Factory) Drop(ctx context.Context) error {
	return f.withConn(ctx, func(c *pgx.Conn) error {
		return pgx.BeginFunc(ctx, c, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, sqlDropLockScopes, f.realm); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, f.lockKey); err != nil {
				return err
			}
			for _, q := range sqlDropRealm {
				if _, err := tx.Exec(ctx, q, f.realm); err != nil {
					return err
				}
			}
			return nil
		})
	})
}

// withConn runs fn over a connection of its own, mapping its error to the
// contract's (nothing fn does is left half done: each is one statement or
// one transaction). The connection is closed afterwards; failing to close
// it gracefully changes nothing fn did and leaves nothing behind (its
// socket is closed either way and the server ends the session), so it
// does not turn a done call into a failed one.
func (f *Factory) withConn(ctx context.Context, fn func(*pgx.Conn) error) error {
	c, err := pgx.ConnectConfig(ctx, f.conn)
	if err != nil {
		return mapErr(ctx, "connect", err)
	}
	err = fn(c)
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	_ = c.Close(cctx) // see above
	if err != nil {
		return mapErr(ctx, "realm "+f.realm, err)
	}
	return nil
}
