package postgres_test

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/stores/postgres"
)

func TestParseURL(t *testing.T) {
	cfg, err := postgres.ParseURL("postgres://u@h:5/db?sslmode=disable&realm=r%201&pool_max_conns=3&fence_renew=2s&fence_lease=9s")
	if err != nil {
		t.Fatalf("ParseURL: %v", err)
	}
	if cfg.Realm != "r 1" || cfg.MaxConns != 3 || cfg.Timing.RenewInterval() != 2*time.Second || cfg.Timing.Lease() != 9*time.Second {
		t.Errorf("ParseURL = %+v, want realm %q, 3 conns, renew 2s, lease 9s", cfg, "r 1")
	}
	if u, err := url.Parse(cfg.URL); err != nil || u.Query().Encode() != "sslmode=disable" || u.Host != "h:5" || u.Path != "/db" {
		t.Errorf("connection URL = %q (%v), want the store's parameters removed and the rest kept", cfg.URL, err)
	}
	if cfg, err := postgres.ParseURL("postgresql://h/db"); err != nil || cfg.Realm != "" || cfg.MaxConns != 0 || cfg.Timing.Valid() {
		t.Errorf("ParseURL without parameters = %+v, %v; want no realm and defaults", cfg, err)
	}
	for _, bad := range []string{
		"mysql://h/db", "sqlite:/x", "postgres://h/db?realm=", "postgres://h/db?pool_max_conns=0",
		"postgres://h/db?pool_max_conns=x", "postgres://h/db?fence_renew=1s", "postgres://h/db?fence_renew=1s&fence_lease=2s",
		"postgres://h/db?fence_renew=x&fence_lease=30s",
	} {
		if _, err := postgres.ParseURL(bad); err == nil {
			t.Errorf("ParseURL(%q) succeeded, want an error", bad)
		}
	}
	for _, realm := range []string{"", "a\x00b", strings.Repeat("r", postgres.MaxRealmBytes+1), "\xff"} {
		if _, err := postgres.New(t.Context(), postgres.Config{URL: "postgres://h/db", Realm: realm}); err == nil {
			t.Errorf("New with realm %q succeeded, want an error", realm)
		}
	}
}

// TestOpenURL: a named realm is the same realm on every open; without a
// realm every open is a fresh one; NewRealm refuses a named realm.
func TestOpenURL(t *testing.T) {
	base := serverURL(t)
	name := postgres.RandomRealm()
	named := base + "&realm=" + url.QueryEscape(name)
	if !strings.Contains(base, "?") {
		named = base + "?realm=" + url.QueryEscape(name)
	}
	f1, err := postgres.OpenURL(t.Context(), named)
	if err != nil {
		t.Fatalf("OpenURL(%q): %v", named, err)
	}
	t.Cleanup(func() {
		if err := f1.(*postgres.Factory).Drop(context.Background()); err != nil {
			t.Errorf("Drop: %v", err)
		}
	})
	w, tok := writer(t, f1.(*postgres.Factory))
	a := scope(hoststore.KindRecord, "a")
	c := id("c")
	commit(t, w, batch(t, c, tok, create(a, "h")))
	f2, err := postgres.OpenURL(t.Context(), named)
	if err != nil {
		t.Fatalf("OpenURL again: %v", err)
	}
	wantHead(t, open(t, f2.(*postgres.Factory)), a, 1, c, "h")
	f3, err := postgres.OpenURL(t.Context(), base)
	if err != nil {
		t.Fatalf("OpenURL without realm: %v", err)
	}
	fresh := f3.(*postgres.Factory)
	t.Cleanup(func() {
		if err := fresh.Drop(context.Background()); err != nil {
			t.Errorf("Drop: %v", err)
		}
	})
	if fresh.Realm() == name {
		t.Errorf("OpenURL without realm opened the named realm %q", name)
	}
	wantHead(t, open(t, fresh), a, 0, "", "")
	if _, err := postgres.NewRealm(t.Context(), named); err == nil {
		t.Errorf("NewRealm(%q) with a realm succeeded, want an error", named)
	}
}

// TestRealmsSideBySide: two realms in one database share nothing: not
// their scopes, not their fences, not their clocks.
func TestRealmsSideBySide(t *testing.T) {
	f1, f2 := newRealm(t), newRealm(t)
	w1, t1 := writer(t, f1)
	a := scope(hoststore.KindSession, "same-name")
	c := id("c")
	commit(t, w1, batch(t, c, t1, create(a, "one", "r")))
	if err := f1.LapseFenceLeases(t.Context()); err != nil {
		t.Fatal(err)
	}
	s2 := open(t, f2)
	wantHead(t, s2, a, 0, "", "")
	wantRows(t, s2, a)
	if page, err := s2.ListHeads(t.Context(), hoststore.KindSession, nil, 10); err != nil || len(page.Heads) != 0 {
		t.Errorf("ListHeads in the other realm = %+v, %v; want empty", page, err)
	}
	g, err := s2.AcquireFence(t.Context(), hoststore.Exclusive)
	if err != nil || g.Token != 1 {
		t.Errorf("the other realm's first acquire = %+v, %v; want token 1", g, err)
	}
	if _, err := open(t, f2).AcquireFence(t.Context(), hoststore.Exclusive); !kindIs(err, hoststore.ErrKindHeld) {
		t.Errorf("the other realm's lease lapsed with the first realm's: %v", err)
	}
	commit(t, s2, batch(t, c, g.Token, create(a, "two"))) // the same commit id, another realm
	wantHead(t, s2, a, 1, c, "two")
	wantHead(t, open(t, f1), a, 1, c, "one")
}

// TestConcurrentFirstUse: many realms set up at once over a new, empty
// database (CREATE TABLE IF NOT EXISTS is not safe under concurrency by
// itself).
func TestConcurrentFirstUse(t *testing.T) {
	dbURL := freshDatabase(t)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			f, err := postgres.NewRealm(t.Context(), dbURL)
			if err == nil {
				err = f.Drop(t.Context())
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("NewRealm at once: %v", err)
		}
	}
}

// TestListingByteOrder: names list in the order of their bytes, which no
// locale collation gives (upper case before lower, UTF-8 after ASCII,
// a space sorting low, no padding rules), paged by Next.
func TestListingByteOrder(t *testing.T) {
	f := newRealm(t)
	w, tok := writer(t, f)
	names := []string{"b", "B", "a b", "ab", "a", "é", "z", "~", "Z", "a ", "\u00ff", "日本", "\U0001F600", "A"}
	var ups []hoststore.ScopeUpdate
	for _, n := range names {
		ups = append(ups, create(scope(hoststore.KindRecord, n), n))
	}
	commit(t, w, batch(t, id("names"), tok, ups...))
	commit(t, w, batch(t, id("other-kind"), tok, create(scope(hoststore.KindSession, "a"), "s")))
	want := slices.Clone(names)
	slices.Sort(want) // Go compares strings by bytes
	for _, limit := range []int{1, 3, len(names), 100} {
		var got []string
		var after *hoststore.ScopeName
		for pages := 0; ; pages++ {
			page, err := w.ListHeads(t.Context(), hoststore.KindRecord, after, limit)
			if err != nil || pages > len(names) {
				t.Fatalf("ListHeads(limit %d): %v after %d pages", limit, err, pages)
			}
			for _, h := range page.Heads {
				got = append(got, string(h.Name))
				if string(h.Head.Head) != string(h.Name) || h.Head.Version != 1 {
					t.Errorf("listed head of %q = %+v", h.Name, h.Head)
				}
			}
			if page.Next == nil {
				break
			}
			if len(page.Heads) == 0 || *page.Next != page.Heads[len(page.Heads)-1].Name {
				t.Fatalf("ListHeads(limit %d): Next %q is not the last name of a non-empty page", limit, *page.Next)
			}
			after = page.Next
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("ListHeads(limit %d) = %q, want byte order %q", limit, got, want)
		}
	}
}

// freshDatabase creates an empty database on the test server, dropped at
// the end of the test, and returns its URL.
func freshDatabase(t *testing.T) string {
	t.Helper()
	base := serverURL(t)
	c, err := pgx.Connect(t.Context(), base)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	name := "conform_t_" + strings.TrimPrefix(postgres.RandomRealm(), "r-")
	if _, err := c.Exec(t.Context(), "CREATE DATABASE "+name); err != nil {
		t.Fatalf("CREATE DATABASE: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := c.Exec(ctx, "DROP DATABASE "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("DROP DATABASE: %v", err)
		}
		if err := c.Close(ctx); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + name
	return u.String()
}
