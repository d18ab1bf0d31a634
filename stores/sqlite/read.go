package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/stores/internal/sqlitedb"
)

// LoadHead returns the scope's visible head, or nil, nil when the scope
// does not exist (never created, or deleted). It reads without the write lock (WAL).
func (s *Store) LoadHead(ctx context.Context, scope hoststore.ScopeRef) (*hoststore.VersionedHead, error) {
	octx, done, err := s.db.Call(ctx, "load head", scope.Validate())
	if err != nil {
		return nil, err
	}
	defer done()
	var version int64
	var id string
	var head []byte
	err = s.db.Read.QueryRowContext(octx,
		`SELECT version, commit_id, head FROM scopes WHERE kind = ? AND name = ? AND deleted = 0`,
		int64(scope.Kind), []byte(scope.Name),
	).Scan(&version, &id, &head)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, s.db.Unavailable(ctx, "load head", err)
	}
	return &hoststore.VersionedHead{Version: hoststore.ScopeVersion(uint64(version)), CommitID: hoststore.CommitID(id), Head: sqlitedb.NonNil(head)}, nil
}

// ListHeads returns up to limit visible scopes of kind with names above
// *after, in byte order of name (BLOB comparison is memcmp), each with its
// head. Next is the last name on the page when more follow, and nil
// otherwise. A limit <= 0 returns *hoststore.InvalidError.
func (s *Store) ListHeads(ctx context.Context, kind hoststore.ScopeKind, after *hoststore.ScopeName, limit int) (hoststore.HeadPage, error) {
	octx, done, err := s.db.Call(ctx, "list heads", sqlitedb.Kind(kind), sqlitedb.Limit(limit))
	if err != nil {
		return hoststore.HeadPage{}, err
	}
	defer done()
	from := []byte{}
	if after != nil {
		from = []byte(*after)
	}
	rows, err := s.db.Read.QueryContext(octx,
		`SELECT name, version, commit_id, head FROM scopes WHERE kind = ? AND deleted = 0 AND name > ? ORDER BY name LIMIT ?`,
		int64(kind), from, int64(limit)+1)
	if err != nil {
		return hoststore.HeadPage{}, s.db.Unavailable(ctx, "list heads", err)
	}
	var page hoststore.HeadPage
	more := false
	for rows.Next() {
		if len(page.Heads) == limit {
			more = true
			break
		}
		var name, head []byte
		var version int64
		var id string
		if err := rows.Scan(&name, &version, &id, &head); err != nil {
			return hoststore.HeadPage{}, errors.Join(s.db.Unavailable(ctx, "list heads", err), rows.Close())
		}
		page.Heads = append(page.Heads, hoststore.NamedHead{
			Name: hoststore.ScopeName(name),
			Head: hoststore.VersionedHead{Version: hoststore.ScopeVersion(uint64(version)), CommitID: hoststore.CommitID(id), Head: sqlitedb.NonNil(head)},
		})
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return hoststore.HeadPage{}, s.db.Unavailable(ctx, "list heads", err)
	}
	if more {
		last := page.Heads[len(page.Heads)-1].Name
		page.Next = &last
	}
	return page, nil
}

// ReadRows returns up to limit visible rows of the scope in index order,
// from index from. A from below the lowest visible index, or a limit <= 0,
// returns *hoststore.InvalidError; a scope that does not exist returns no
// rows. The scope's range and its rows are read in one snapshot.
func (s *Store) ReadRows(ctx context.Context, scope hoststore.ScopeRef, from hoststore.RowIndex, limit int) ([]hoststore.Row, error) {
	octx, done, err := s.db.Call(ctx, "read rows", scope.Validate(), sqlitedb.Limit(limit))
	if err != nil {
		return nil, err
	}
	defer done()
	tx, err := s.db.Read.BeginTx(octx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, s.db.Unavailable(ctx, "read rows", err)
	}
	out, err := readRows(octx, tx, scope, from, limit)
	if rerr := tx.Rollback(); err == nil && rerr != nil {
		err = rerr
	}
	var inv *hoststore.InvalidError
	if err != nil && !errors.As(err, &inv) {
		return nil, s.db.Unavailable(ctx, "read rows", err)
	}
	return out, err
}

func readRows(ctx context.Context, tx *sql.Tx, scope hoststore.ScopeRef, from hoststore.RowIndex, limit int) ([]hoststore.Row, error) {
	st, err := readScope(ctx, tx, scope)
	if err != nil {
		return nil, err
	}
	out := []hoststore.Row{}
	if !st.exists || st.deleted {
		return out, nil
	}
	if uint64(from) < st.start {
		return nil, &hoststore.InvalidError{Detail: fmt.Sprintf("read rows: %s from %d is below its first visible row %d", scope, from, st.start)}
	}
	if uint64(from) >= st.end || from > math.MaxInt64 {
		return out, nil
	}
	rows, err := tx.QueryContext(ctx,
		`SELECT idx, data FROM rows WHERE kind = ? AND name = ? AND idx >= ? ORDER BY idx LIMIT ?`,
		int64(scope.Kind), []byte(scope.Name), int64(from), int64(limit))
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var idx int64
		var data []byte
		if err := rows.Scan(&idx, &data); err != nil {
			return nil, errors.Join(err, rows.Close())
		}
		out = append(out, hoststore.Row{Index: hoststore.RowIndex(idx), Data: sqlitedb.NonNil(data)})
	}
	return out, errors.Join(rows.Err(), rows.Close())
}
