package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/conform-spi/conform/harness"
	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/stores/appendonly"
	"github.com/conform-spi/conform/stores/postgres"
	"github.com/conform-spi/conform/stores/sqlite"
)

// fileRealms opens a file-backed store whose URL is SCHEME:DIR: each realm
// the run asks for is a new database file in DIR (created if missing; a
// temporary directory when DIR is empty), so every chapter starts empty.
// The store packages' own URLs (SCHEME:FILE) name one realm's file; the
// command refuses a file, since a run needs a fresh realm per chapter.
func fileRealms(scheme string, newRealm func(ctx context.Context, dir string) (hoststore.HostStoreFactory, error)) harness.Opener {
	return func(_ context.Context, url string) (harness.NewRealm, error) {
		dir := strings.TrimPrefix(strings.TrimPrefix(url, scheme+":"), "//")
		if dir == "" {
			d, err := os.MkdirTemp("", "conform-"+strings.ReplaceAll(scheme, "+", "-")+"-*")
			if err != nil {
				return nil, err
			}
			dir = d
		} else if st, err := os.Stat(dir); err == nil && !st.IsDir() {
			return nil, fmt.Errorf("%s: %q is a file; conform gives every chapter a fresh, empty realm, so name a directory for the realms' files (%s:DIR)", scheme, dir, scheme)
		} else if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("%s: the realms' directory: %v", scheme, err)
		}
		return func(ctx context.Context) (hoststore.HostStoreFactory, error) { return newRealm(ctx, dir) }, nil
	}
}

func openSQLite() harness.Opener {
	return fileRealms("sqlite", func(ctx context.Context, dir string) (hoststore.HostStoreFactory, error) {
		return sqlite.NewRealm(ctx, dir)
	})
}

func openAppendOnly() harness.Opener {
	return fileRealms("appendonly+sqlite", func(ctx context.Context, dir string) (hoststore.HostStoreFactory, error) {
		return appendonly.NewRealm(ctx, dir)
	})
}

// openPostgres opens postgres://USER@HOST:PORT/DB?sslmode=disable (the
// libpq URL form): every realm the run asks for is a fresh one with a
// random id, side by side with any others in that database.
func openPostgres(_ context.Context, url string) (harness.NewRealm, error) {
	if _, err := postgres.ParseURL(url); err != nil {
		return nil, err
	}
	return func(ctx context.Context) (hoststore.HostStoreFactory, error) { return postgres.NewRealm(ctx, url) }, nil
}
