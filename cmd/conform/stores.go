package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/internal/engine"
	"github.com/conform-spi/conform/stores/appendonly"
	"github.com/conform-spi/conform/stores/postgres"
	"github.com/conform-spi/conform/stores/sqlite"
)

// fileRealms opens a file-backed store whose URL is SCHEME:DIR: each realm
// the run asks for is a new database file in DIR (created if missing), so
// every chapter starts empty, and closing the realm's factory removes the
// file while DIR stays. When DIR is empty, each realm gets a temporary
// directory of its own, removed with the realm (see tempRealm), so a run
// leaves nothing in $TMPDIR. The store packages' own URLs (SCHEME:FILE)
// name one realm's file; the command refuses a file, since a run needs a
// fresh realm per chapter.
func fileRealms(scheme string, newRealm func(ctx context.Context, dir string) (hoststore.HostStoreFactory, error)) engine.Opener {
	return func(_ context.Context, url string) (engine.NewRealm, error) {
		dir := strings.TrimPrefix(strings.TrimPrefix(url, scheme+":"), "//")
		if dir == "" {
			pattern := "conform-" + strings.ReplaceAll(scheme, "+", "-") + "-*"
			return func(ctx context.Context) (hoststore.HostStoreFactory, error) {
				return newTempRealm(ctx, pattern, newRealm)
			}, nil
		}
		if st, err := os.Stat(dir); err == nil && !st.IsDir() {
			return nil, fmt.Errorf("%s: %q is a file; conform gives every chapter a fresh, empty realm, so name a directory for the realms' files (%s:DIR)", scheme, dir, scheme)
		} else if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("%s: the realms' directory: %v", scheme, err)
		}
		return func(ctx context.Context) (hoststore.HostStoreFactory, error) { return newRealm(ctx, dir) }, nil
	}
}

// tempRealm is a realm in a temporary directory of its own. It is the
// store's factory, with a Close that also removes the directory.
type tempRealm struct {
	hoststore.HostStoreFactory
	dir string
}

// newTempRealm makes a temporary directory named after pattern (see
// os.MkdirTemp) and a new realm in it; when the realm cannot be made, the
// directory is removed again.
func newTempRealm(ctx context.Context, pattern string, newRealm func(ctx context.Context, dir string) (hoststore.HostStoreFactory, error)) (*tempRealm, error) {
	dir, err := os.MkdirTemp("", pattern)
	if err != nil {
		return nil, err
	}
	f, err := newRealm(ctx, dir)
	if err != nil {
		return nil, errors.Join(err, os.RemoveAll(dir))
	}
	return &tempRealm{HostStoreFactory: f, dir: dir}, nil
}

// Close closes the store's factory, which removes the realm's files and
// kills any handle still open, then removes the realm's directory with
// whatever is left in it. It returns both errors, joined, or nil; Close
// after Close returns nil.
func (r *tempRealm) Close() error {
	var err error
	if c, ok := r.HostStoreFactory.(io.Closer); ok {
		err = c.Close()
	}
	return errors.Join(err, os.RemoveAll(r.dir))
}

func openSQLite() engine.Opener {
	return fileRealms("sqlite", func(ctx context.Context, dir string) (hoststore.HostStoreFactory, error) {
		return sqlite.NewRealm(ctx, dir)
	})
}

func openAppendOnly() engine.Opener {
	return fileRealms("appendonly+sqlite", func(ctx context.Context, dir string) (hoststore.HostStoreFactory, error) {
		return appendonly.NewRealm(ctx, dir)
	})
}

// openPostgres opens postgres://USER@HOST:PORT/DB?sslmode=disable (the
// libpq URL form): every realm the run asks for is a fresh one with a
// random id, side by side with any others in that database.
func openPostgres(_ context.Context, url string) (engine.NewRealm, error) {
	if _, err := postgres.ParseURL(url); err != nil {
		return nil, err
	}
	return func(ctx context.Context) (hoststore.HostStoreFactory, error) { return postgres.NewRealm(ctx, url) }, nil
}
