package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/conform-spi/conform/hoststore"
)

// Reads are single statements at READ COMMITTED: each sees one snapshot of
// committed data, so a batch shows completely or not at all (obligation 1),
// and they take no lock, so no commit in flight holds them up.

const sqlLoadHead = `SELECT version, commit_id, head FROM conform_scopes
	WHERE realm = $1 AND kind = $2 AND name = $3 AND NOT deleted`

// LoadHead returns the scope's visible head, or nil, nil when the scope does
// not exist: never created, or deleted (its tombstone is not visible). A
// malformed scope is *InvalidError.
func (s *Store) LoadHead(ctx context.Context, ref hoststore.ScopeRef) (*hoststore.VersionedHead, error) {
	if err := checkScope("LoadHead", ref); err != nil {
		return nil, err
	}
	var h *hoststore.VersionedHead
	err := s.query(ctx, "LoadHead", func(c *conn) error {
		var (
			v    int64
			id   string
			head []byte
		)
		err := c.QueryRow(ctx, sqlLoadHead, s.f.realm, int16(ref.Kind), []byte(ref.Name)).Scan(&v, &id, &head)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			return nil
		case err != nil:
			return err
		}
		h = &hoststore.VersionedHead{Version: hoststore.ScopeVersion(v), CommitID: hoststore.CommitID(id), Head: nonNil(head)}
		return nil
	})
	return h, err
}

const sqlListHeads = `SELECT name, version, commit_id, head FROM conform_scopes
	WHERE realm = $1 AND kind = $2 AND name > $3 AND NOT deleted
	ORDER BY name LIMIT $4`

// ListHeads returns up to limit visible scopes of kind with names above *after,
// in byte order of name (bytea order), each with its head. Next is the last
// name on the page when another visible scope follows, and nil otherwise. A bad
// kind, a malformed cursor or a limit <= 0 is *InvalidError.
func (s *Store) ListHeads(ctx context.Context, kind hoststore.ScopeKind, after *hoststore.ScopeName, limit int) (hoststore.HeadPage, error) {
	if !kind.Valid() {
		return hoststore.HeadPage{}, &hoststore.InvalidError{Detail: fmt.Sprintf("ListHeads kind %d is not a kind", uint8(kind))}
	}
	if limit <= 0 {
		return hoststore.HeadPage{}, &hoststore.InvalidError{Detail: fmt.Sprintf("ListHeads limit %d is not positive", limit)}
	}
	from := []byte{}
	if after != nil {
		if err := after.Validate(); err != nil {
			return hoststore.HeadPage{}, &hoststore.InvalidError{Detail: "ListHeads after: " + err.Error()}
		}
		from = []byte(*after)
	}
	lim := clampLimit(limit)
	var page hoststore.HeadPage
	err := s.query(ctx, "ListHeads", func(c *conn) error {
		page = hoststore.HeadPage{}
		rows, err := c.Query(ctx, sqlListHeads, s.f.realm, int16(kind), from, lim+1)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var (
				name, head []byte
				v          int64
				id         string
			)
			if err := rows.Scan(&name, &v, &id, &head); err != nil {
				return err
			}
			if int64(len(page.Heads)) == lim {
				page.Next = hoststore.Ptr(page.Heads[len(page.Heads)-1].Name)
				break
			}
			page.Heads = append(page.Heads, hoststore.NamedHead{
				Name: hoststore.ScopeName(name),
				Head: hoststore.VersionedHead{Version: hoststore.ScopeVersion(v), CommitID: hoststore.CommitID(id), Head: nonNil(head)},
			})
		}
		return rows.Err()
	})
	return page, err
}

// sqlReadRows reads the scope's bounds and its rows from $4 in one
// statement, so both come from one snapshot.
const sqlReadRows = `SELECT s.row_start, s.deleted, r.idx, r.data
	FROM conform_scopes s
	LEFT JOIN LATERAL (
		SELECT idx, data FROM conform_rows
		WHERE realm = $1 AND kind = $2 AND name = $3 AND idx >= $4 AND idx < s.row_end
		ORDER BY idx LIMIT $5
	) r ON true
	WHERE s.realm = $1 AND s.kind = $2 AND s.name = $3
	ORDER BY r.idx`

// ReadRows returns up to limit visible rows of the scope in index order,
// from index from, fewer only where the scope ends. A scope that does not
// exist (or was deleted) returns no rows; a from below the lowest visible
// index, a limit <= 0 or a malformed scope returns *InvalidError.
func (s *Store) ReadRows(ctx context.Context, ref hoststore.ScopeRef, from hoststore.RowIndex, limit int) ([]hoststore.Row, error) {
	if err := checkScope("ReadRows", ref); err != nil {
		return nil, err
	}
	if limit <= 0 {
		return nil, &hoststore.InvalidError{Detail: fmt.Sprintf("ReadRows limit %d is not positive", limit)}
	}
	var out []hoststore.Row
	err := s.query(ctx, "ReadRows", func(c *conn) error {
		out = nil
		rows, err := c.Query(ctx, sqlReadRows, s.f.realm, int16(ref.Kind), []byte(ref.Name), clampIndex(from), clampLimit(limit))
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var (
				start   int64
				deleted bool
				idx     *int64
				data    []byte
			)
			if err := rows.Scan(&start, &deleted, &idx, &data); err != nil {
				return err
			}
			if deleted {
				return nil
			}
			if from < hoststore.RowIndex(start) {
				return &hoststore.InvalidError{Detail: fmt.Sprintf("ReadRows from %d is below the first visible row %d", from, start)}
			}
			if idx != nil {
				out = append(out, hoststore.Row{Index: hoststore.RowIndex(*idx), Data: nonNil(data)})
			}
		}
		return rows.Err()
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// query runs one read on a pooled connection.
func (s *Store) query(ctx context.Context, op string, fn func(*conn) error) error {
	c, err := s.get(ctx, op)
	if err != nil {
		return err
	}
	err = fn(c)
	s.release(ctx, c)
	return mapErr(ctx, op, err)
}

func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}
