package main_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestPostgresRunLeavesNoRealm runs the command against a database of its
// own on the test server (scripts/test.sh starts one and sets
// CONFORM_PG_URL) and checks that no row of any realm is left in the
// store's tables afterwards, and that --keep-realms keeps them.
func TestPostgresRunLeavesNoRealm(t *testing.T) {
	base := os.Getenv("CONFORM_PG_URL")
	if base == "" {
		t.Fatal("CONFORM_PG_URL is not set: run the tests with scripts/test.sh, which starts a PostgreSQL server")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	admin, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	var b [6]byte
	rand.Read(b[:])
	db := "conform_e2e_" + hex.EncodeToString(b[:])
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+db); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if _, err := admin.Exec(context.Background(), "DROP DATABASE "+db+" WITH (FORCE)"); err != nil {
			t.Errorf("drop %s: %v", db, err)
		}
	}()
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + db
	store := u.String()
	count := func() int {
		conn, err := pgx.Connect(ctx, store)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		n := 0
		for _, table := range []string{"conform_realms", "conform_fences", "conform_scopes", "conform_rows", "conform_commits"} {
			var k int
			if err := conn.QueryRow(ctx, "SELECT count(*) FROM "+table).Scan(&k); err != nil {
				t.Fatalf("%s: %v", table, err)
			}
			n += k
		}
		return n
	}
	r := conform(t, "run", "--store", store, "--label-filter", "chapter:host-store || chapter:long-run", "--report-dir", filepath.Join(t.TempDir(), "r"))
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if n := count(); n != 0 {
		t.Errorf("the run left %d rows in the store's tables", n)
	}
	r = conform(t, "run", "--store", store, "--rows", "reopen", "--keep-realms", "--report-dir", filepath.Join(t.TempDir(), "r"))
	if n := count(); r.code != 0 || n == 0 {
		t.Errorf("--keep-realms: exit %d, %d rows kept", r.code, n)
	}
}
