package postgres_test

import (
	"context"
	"os"
	"testing"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/internal/storetest"
	"github.com/conform-spi/conform/stores/postgres"
)

// EnvURL names the environment variable that holds the test server's URL.
const EnvURL = "CONFORM_PG_URL"

// serverURL returns the test server's URL and fails the test without one:
// these tests never skip.
func serverURL(t testing.TB) string {
	t.Helper()
	u := os.Getenv(EnvURL)
	if u == "" {
		t.Fatalf("%s is not set: run these tests under the README's test command, scripts/test.sh, "+
			"or start a throwaway server first: eval \"$(scripts/pg.sh start)\"", EnvURL)
	}
	return u
}

// newRealm makes a fresh realm for one test and closes it at the end,
// which deletes it.
func newRealm(t testing.TB) *postgres.Factory {
	t.Helper()
	f, err := postgres.NewRealm(context.Background(), serverURL(t))
	if err != nil {
		t.Fatalf("NewRealm: %v", err)
	}
	t.Cleanup(func() {
		if err := f.Close(); err != nil {
			t.Errorf("Close(%s): %v", f.Realm(), err)
		}
	})
	return f
}

func newFactory(t testing.TB) hoststore.HostStoreFactory { return newRealm(t) }

// TestSemantics runs the store authors' shared semantic suite: the store
// meets obligations 4 and 5 at commit and refuses a deleted name's create.
func TestSemantics(t *testing.T) {
	storetest.Run(t, storetest.Config{NewFactory: newFactory, RefusesAtCommit: true, RefusesDeletedName: true})
}

func BenchmarkCommitSmall(b *testing.B) { storetest.BenchCommitSmall(b, newFactory) }

func BenchmarkCommitParallel64(b *testing.B) { storetest.BenchCommitParallel(b, newFactory, 64) }
