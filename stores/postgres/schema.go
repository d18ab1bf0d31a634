package postgres

import (
	"context"
	"hash/fnv"

	"github.com/jackc/pgx/v5"
)

// The shared tables, created once per database. Every realm is a key
// column: several realms live side by side. Names are bytea, so that
// indexes and ORDER BY compare them byte by byte; text keys are COLLATE "C".
var sqlSchema = []string{
	`CREATE TABLE IF NOT EXISTS conform_realms (
		realm        text COLLATE "C" PRIMARY KEY,
		clock_offset interval NOT NULL DEFAULT interval '0',
		created_at   timestamptz NOT NULL DEFAULT now()
	)`,
	`CREATE TABLE IF NOT EXISTS conform_fences (
		realm       text COLLATE "C" PRIMARY KEY,
		token       bigint NOT NULL DEFAULT 0,
		lease_until timestamptz
	)`,
	`CREATE TABLE IF NOT EXISTS conform_scopes (
		realm     text COLLATE "C" NOT NULL,
		kind      smallint NOT NULL,
		name      bytea NOT NULL,
		version   bigint NOT NULL,
		commit_id text COLLATE "C" NOT NULL,
		head      bytea,
		deleted   boolean NOT NULL DEFAULT false,
		row_start bigint NOT NULL,
		row_end   bigint NOT NULL,
		PRIMARY KEY (realm, kind, name)
	)`,
	`CREATE TABLE IF NOT EXISTS conform_rows (
		realm text COLLATE "C" NOT NULL,
		kind  smallint NOT NULL,
		name  bytea NOT NULL,
		idx   bigint NOT NULL,
		data  bytea NOT NULL,
		PRIMARY KEY (realm, kind, name, idx)
	)`,
	`CREATE TABLE IF NOT EXISTS conform_commits (
		realm        text COLLATE "C" NOT NULL,
		commit_id    text COLLATE "C" NOT NULL,
		token        bigint NOT NULL,
		committed_at timestamptz NOT NULL DEFAULT clock_timestamp(),
		PRIMARY KEY (realm, commit_id)
	)`,
}

// sqlNewRealm makes the realm's own rows, its clock and its fence, when absent.
var sqlNewRealm = []string{
	`INSERT INTO conform_realms (realm) VALUES ($1) ON CONFLICT DO NOTHING`,
	`INSERT INTO conform_fences (realm) VALUES ($1) ON CONFLICT DO NOTHING`,
}

// sqlDropLockScopes locks every scope row of a realm, in the (kind, name)
// order in which commits lock theirs, so that Drop and a commit never wait
// for each other in a cycle.
const sqlDropLockScopes = `SELECT 1 FROM conform_scopes WHERE realm = $1 ORDER BY kind, name FOR UPDATE`

// sqlDropRealm deletes every row of a realm.
var sqlDropRealm = []string{
	`DELETE FROM conform_rows WHERE realm = $1`,
	`DELETE FROM conform_scopes WHERE realm = $1`,
	`DELETE FROM conform_commits WHERE realm = $1`,
	`DELETE FROM conform_fences WHERE realm = $1`,
	`DELETE FROM conform_realms WHERE realm = $1`,
}

// schemaLockKey is the advisory lock that serialises schema setup, so that
// concurrent first uses of a database never race on CREATE TABLE.
var schemaLockKey = lockKey("conform-postgres/schema")

// fenceLockKey is the advisory lock key of a realm's fence (see the package
// doc). Two realms whose keys collide only share a lock: still correct.
func fenceLockKey(realm string) int64 { return lockKey("conform-postgres/fence\x00" + realm) }

func lockKey(s string) int64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(s)) // a hash.Hash never fails to write
	return int64(h.Sum64())
}

// setup creates the shared tables when absent and the realm's rows.
func (f *Factory) setup(ctx context.Context) error {
	return f.withConn(ctx, func(c *pgx.Conn) error {
		return pgx.BeginFunc(ctx, c, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, schemaLockKey); err != nil {
				return err
			}
			for _, q := range sqlSchema {
				if _, err := tx.Exec(ctx, q); err != nil {
					return err
				}
			}
			for _, q := range sqlNewRealm {
				if _, err := tx.Exec(ctx, q, f.realm); err != nil {
					return err
				}
			}
			return nil
		})
	})
}
