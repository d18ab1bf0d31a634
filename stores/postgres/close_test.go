package postgres_test

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/instore"
	"github.com/conform-spi/conform/stores/postgres"
)

// realmTables are the store's shared tables, each keyed by realm.
var realmTables = []string{"conform_realms", "conform_fences", "conform_scopes", "conform_rows", "conform_commits"}

// realmRows returns how many rows of realm each shared table holds.
func realmRows(t *testing.T, realm string) map[string]int {
	t.Helper()
	c, err := pgx.Connect(t.Context(), serverURL(t))
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer func() {
		if err := c.Close(context.Background()); err != nil {
			t.Errorf("close: %v", err)
		}
	}()
	n := map[string]int{}
	for _, table := range realmTables {
		var k int
		if err := c.QueryRow(t.Context(), "SELECT count(*) FROM "+table+" WHERE realm = $1", realm).Scan(&k); err != nil {
			t.Fatalf("count %s: %v", table, err)
		}
		n[table] = k
	}
	return n
}

// fill commits a batch on a new handle of f that puts a row of the realm
// in every shared table, checks that it did, and returns the handle, still
// open, and its token.
func fill(t *testing.T, f *postgres.Factory) (*postgres.Store, hoststore.FenceToken) {
	t.Helper()
	s, err := f.OpenStore(t.Context())
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	g, err := s.AcquireFence(t.Context(), hoststore.Takeover)
	if err != nil {
		t.Fatalf("AcquireFence: %v", err)
	}
	commit(t, s, batch(t, id("fill"), g.Token, create(scope(hoststore.KindRecord, "a"), "h", "r0", "r1")))
	for table, k := range realmRows(t, f.Realm()) {
		if k == 0 {
			t.Fatalf("after a commit %s holds no row of realm %s", table, f.Realm())
		}
	}
	return s, g.Token
}

// wantNoRows checks that no shared table holds a row of realm.
func wantNoRows(t *testing.T, realm string) {
	t.Helper()
	for table, k := range realmRows(t, realm) {
		if k != 0 {
			t.Errorf("%s holds %d rows of the closed realm %s, want none", table, k, realm)
		}
	}
}

// TestCloseDeletesNewRealm: Close of a realm NewRealm made, once its
// handle is killed, deletes every row of it; Close again returns nil, and
// Open after Close returns Unavailable.
func TestCloseDeletesNewRealm(t *testing.T) {
	f, err := postgres.NewRealm(t.Context(), serverURL(t))
	if err != nil {
		t.Fatalf("NewRealm: %v", err)
	}
	if !f.Owned() {
		t.Error("a NewRealm factory does not own its realm")
	}
	s, _ := fill(t, f)
	s.Kill()
	if err := f.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	wantNoRows(t, f.Realm())
	if err := f.Close(); err != nil {
		t.Errorf("Close again: %v", err)
	}
	if _, err := f.Open(t.Context()); !kindIs(err, hoststore.ErrKindUnavailable) {
		t.Errorf("Open after Close = %v, want Unavailable", err)
	}
}

// TestCloseDeletesOpenURLRealm: OpenURL without realm makes one, and Close
// deletes it as it does NewRealm's.
func TestCloseDeletesOpenURLRealm(t *testing.T) {
	hf, err := postgres.OpenURL(t.Context(), serverURL(t))
	if err != nil {
		t.Fatalf("OpenURL: %v", err)
	}
	f := hf.(*postgres.Factory)
	s, _ := fill(t, f)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	wantNoRows(t, f.Realm())
}

// TestCloseKillsHeldCommit: Close with a handle still open, its commit held
// with the scope rows locked, kills the handle (the released commit
// returns Unavailable) and deletes the realm without waiting for the
// release.
func TestCloseKillsHeldCommit(t *testing.T) {
	f, err := postgres.NewRealm(t.Context(), serverURL(t))
	if err != nil {
		t.Fatalf("NewRealm: %v", err)
	}
	s, tok := fill(t, f)
	a := scope(hoststore.KindRecord, "a")
	h, res := hold(t, s, batch(t, id("held"), tok, next(a, 1, "h2", "r2"), create(scope(hoststore.KindRecord, "b"), "b")), instore.CommitLocked)
	if err := f.Close(); err != nil {
		t.Fatalf("Close with a held commit: %v", err)
	}
	h.Release()
	if err := <-res; !kindIs(err, hoststore.ErrKindUnavailable) {
		t.Errorf("the held commit, released after Close, answered %v; want Unavailable", err)
	}
	if _, err := s.LoadHead(t.Context(), a); !kindIs(err, hoststore.ErrKindUnavailable) {
		t.Errorf("LoadHead on a handle after the factory's Close = %v, want Unavailable", err)
	}
	wantNoRows(t, f.Realm())
}

// TestCloseKeepsNamedRealm: Close of a realm the caller named, by
// Config.Realm or by realm=NAME, deletes nothing and returns nil, twice;
// the realm opened again holds what was committed.
func TestCloseKeepsNamedRealm(t *testing.T) {
	base := serverURL(t)
	for _, how := range []string{"New", "OpenURL"} {
		t.Run(how, func(t *testing.T) {
			name := postgres.RandomRealm()
			var f *postgres.Factory
			switch how {
			case "New":
				cfg, err := postgres.ParseURL(base)
				if err != nil {
					t.Fatal(err)
				}
				cfg.Realm = name
				if f, err = postgres.New(t.Context(), cfg); err != nil {
					t.Fatalf("New: %v", err)
				}
			case "OpenURL":
				sep := "?"
				if strings.Contains(base, "?") {
					sep = "&"
				}
				hf, err := postgres.OpenURL(t.Context(), base+sep+"realm="+url.QueryEscape(name))
				if err != nil {
					t.Fatalf("OpenURL: %v", err)
				}
				f = hf.(*postgres.Factory)
			}
			t.Cleanup(func() {
				if err := f.Drop(context.Background()); err != nil {
					t.Errorf("Drop: %v", err)
				}
			})
			if f.Owned() {
				t.Errorf("a named realm's factory (%s) owns it", how)
			}
			s, _ := fill(t, f)
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			before := realmRows(t, name)
			for i := range 2 {
				if err := f.Close(); err != nil {
					t.Errorf("Close %d: %v", i+1, err)
				}
			}
			for table, k := range realmRows(t, name) {
				if k != before[table] {
					t.Errorf("after Close %s holds %d rows of the named realm, want %d", table, k, before[table])
				}
			}
			cfg, err := postgres.ParseURL(base)
			if err != nil {
				t.Fatal(err)
			}
			cfg.Realm = name
			g, err := postgres.New(t.Context(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			head, err := open(t, g).LoadHead(t.Context(), scope(hoststore.KindRecord, "a"))
			if err != nil || head == nil || head.Version != hoststore.FirstVersion || string(head.Head) != "h" {
				t.Errorf("LoadHead in the named realm after Close = %+v, %v; want version 1, head %q", head, err, "h")
			}
		})
	}
}
