package postgres_test

import (
	"net/url"
	"testing"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/stores/postgres"
)

// FuzzParseURL feeds --store URLs to ParseURL: it never panics, and what
// it accepts is a postgres URL with valid fence timing, which parses again
// to the same realm, timing and pool bound.
func FuzzParseURL(f *testing.F) {
	for _, s := range []string{
		"postgres://conform@127.0.0.1:5432/conform?sslmode=disable",
		"postgresql://u:p@h/db?realm=r1&pool_max_conns=4&fence_renew=10s&fence_lease=30s",
		"postgres://h/db?fence_renew=9223372036854775807ns&fence_lease=1ns",
		"postgres://h/db?realm=&pool_max_conns=-1",
		"postgres://h/db?realm=%00%ff",
		"postgres://[::1/db",
		"mysql://h/db",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		cfg, err := postgres.ParseURL(s)
		if err != nil {
			return
		}
		if cfg.Timing != (hoststore.FenceTiming{}) && !cfg.Timing.Valid() {
			t.Fatalf("ParseURL(%q) accepted fence timing %v", s, cfg.Timing)
		}
		u, err := url.Parse(cfg.URL)
		if err != nil {
			t.Fatalf("ParseURL(%q) returned URL %q, which does not parse: %v", s, cfg.URL, err)
		}
		if cfg.Realm != "" {
			q := u.Query()
			q.Set(postgres.ParamRealm, cfg.Realm)
			u.RawQuery = q.Encode()
		}
		back, err := postgres.ParseURL(u.String())
		if err != nil {
			t.Fatalf("ParseURL(%q) = %+v, whose URL %q does not parse: %v", s, cfg, u, err)
		}
		if back.Realm != cfg.Realm || back.URL != cfg.URL {
			t.Fatalf("ParseURL(%q): realm %q, URL %q; parsed again: %q, %q", s, cfg.Realm, cfg.URL, back.Realm, back.URL)
		}
	})
}
