package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/stores/sqlite"
	"github.com/conform-spi/conform/stores/sqlite/storetest"
)

func newFactory(t testing.TB) hoststore.HostStoreFactory {
	t.Helper()
	f, err := sqlite.NewRealm(context.Background(), t.TempDir())
	if err != nil {
		t.Fatalf("NewRealm: %v", err)
	}
	return f
}

func TestSemantics(t *testing.T) {
	storetest.Run(t, storetest.Config{NewFactory: newFactory, RefusesAtCommit: true, RefusesDeletedName: true})
}

func TestOpenURL(t *testing.T) {
	path := filepath.Join(t.TempDir(), "realm.db")
	f, err := sqlite.OpenURL(t.Context(), "sqlite:"+path)
	if err != nil {
		t.Fatalf("OpenURL: %v", err)
	}
	if got := f.(*sqlite.Factory).Path(); got != path {
		t.Errorf("Path() = %q, want %q", got, path)
	}
	for _, bad := range []string{"sqlite:", "postgres://x", "sqlite:/a?b", path} {
		if _, err := sqlite.OpenURL(t.Context(), bad); err == nil {
			t.Errorf("OpenURL(%q) succeeded, want an error", bad)
		}
	}
}

func BenchmarkCommitSmall(b *testing.B) { storetest.BenchCommitSmall(b, newFactory) }

func BenchmarkCommitParallel64(b *testing.B) { storetest.BenchCommitParallel(b, newFactory, 64) }

func BenchmarkCommitParallel64Over8Handles(b *testing.B) {
	storetest.BenchCommitParallelHandles(b, newFactory, 64, 8)
}
