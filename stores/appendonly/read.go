package appendonly

import (
	"context"
	"database/sql"
	"fmt"
	"sort"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/stores/internal/sqlitedb"
)

// head fetches the head that batch id wrote for ref.
func (s *Store) head(ctx context.Context, ref hoststore.ScopeRef, id hoststore.CommitID) ([]byte, error) {
	var head []byte
	err := s.db.Read.QueryRowContext(ctx,
		`SELECT head FROM updates_log WHERE commit_id = ? AND kind = ? AND name = ? AND has_head = 1 LIMIT 1`,
		string(id), int64(ref.Kind), []byte(ref.Name)).Scan(&head)
	if err != nil {
		return nil, fmt.Errorf("head of %s by %q: %w", ref, id, err)
	}
	return sqlitedb.NonNil(head), nil
}

// LoadHead returns the scope's visible head, or nil, nil when the scope
// does not exist: never created, deleted, or written only by batches a load
// hides.
func (s *Store) LoadHead(ctx context.Context, scope hoststore.ScopeRef) (*hoststore.VersionedHead, error) {
	octx, done, err := s.db.Call(ctx, "load head", scope.Validate())
	if err != nil {
		return nil, err
	}
	defer done()
	v, err := s.readScope(octx, scope)
	if err != nil {
		return nil, s.db.Unavailable(ctx, "load head: read log", err)
	}
	if v == nil || v.deleted {
		return nil, nil
	}
	head, err := s.head(octx, scope, v.headID)
	if err != nil {
		return nil, s.db.Unavailable(ctx, "load head", err)
	}
	return &hoststore.VersionedHead{Version: v.version, CommitID: v.id, Head: head}, nil
}

// ListHeads returns up to limit visible scopes of kind with names above
// *after, in byte order of name, each with its head. Next is the last name
// on the page when more follow, and nil otherwise. A limit <= 0 returns
// *hoststore.InvalidError.
func (s *Store) ListHeads(ctx context.Context, kind hoststore.ScopeKind, after *hoststore.ScopeName, limit int) (hoststore.HeadPage, error) {
	octx, done, err := s.db.Call(ctx, "list heads", sqlitedb.Kind(kind), sqlitedb.Limit(limit))
	if err != nil {
		return hoststore.HeadPage{}, err
	}
	defer done()
	views, err := s.readLog(octx)
	if err != nil {
		return hoststore.HeadPage{}, s.db.Unavailable(ctx, "list heads: read log", err)
	}
	var names []hoststore.ScopeName
	for ref, v := range views {
		if ref.Kind == kind && !v.deleted && (after == nil || ref.Name > *after) {
			names = append(names, ref.Name)
		}
	}
	// Go compares strings byte by byte: the byte order of names.
	sort.Slice(names, func(i, j int) bool { return names[i] < names[j] })
	var page hoststore.HeadPage
	for i, name := range names {
		if i == limit {
			last := names[limit-1]
			page.Next = &last
			break
		}
		ref := hoststore.ScopeRef{Kind: kind, Name: name}
		v := views[ref]
		head, err := s.head(octx, ref, v.headID)
		if err != nil {
			return hoststore.HeadPage{}, s.db.Unavailable(ctx, "list heads", err)
		}
		page.Heads = append(page.Heads, hoststore.NamedHead{Name: name, Head: hoststore.VersionedHead{Version: v.version, CommitID: v.id, Head: head}})
	}
	return page, nil
}

// ReadRows returns up to limit visible rows of the scope in index order,
// from index from. A from below the lowest visible index, or a limit <= 0,
// returns *hoststore.InvalidError; a scope that does not exist returns no
// rows.
func (s *Store) ReadRows(ctx context.Context, scope hoststore.ScopeRef, from hoststore.RowIndex, limit int) ([]hoststore.Row, error) {
	octx, done, err := s.db.Call(ctx, "read rows", scope.Validate(), sqlitedb.Limit(limit))
	if err != nil {
		return nil, err
	}
	defer done()
	v, err := s.readScope(octx, scope)
	if err != nil {
		return nil, s.db.Unavailable(ctx, "read rows: read log", err)
	}
	out := []hoststore.Row{}
	if v == nil || v.deleted {
		return out, nil
	}
	if uint64(from) < v.start {
		return nil, &hoststore.InvalidError{Detail: fmt.Sprintf("read rows: %s from %d is below its first visible row %d", scope, from, v.start)}
	}
	to := v.end
	if uint64(from) < to && to-uint64(from) > uint64(limit) {
		to = uint64(from) + uint64(limit)
	}
	for _, p := range v.rowsIn(uint64(from), to) {
		got, err := s.piece(octx, scope, p)
		if err != nil {
			return nil, s.db.Unavailable(ctx, "read rows", err)
		}
		out = append(out, got...)
	}
	return out, nil
}

// piece fetches the rows of one piece, keeping one copy of a row written
// twice, and fails when one is missing.
func (s *Store) piece(ctx context.Context, scope hoststore.ScopeRef, p piece) ([]hoststore.Row, error) {
	out := make([]hoststore.Row, 0, p.hi-p.lo)
	want := p.lo - p.base
	err := s.query(ctx,
		`SELECT idx, data FROM rows_log WHERE kind = ? AND name = ? AND commit_id = ? AND idx >= ? AND idx < ? ORDER BY idx, rowid`,
		[]any{int64(scope.Kind), []byte(scope.Name), string(p.id), int64(p.lo - p.base), int64(p.hi - p.base)},
		func(r *sql.Rows) error {
			var idx int64
			var data []byte
			if err := r.Scan(&idx, &data); err != nil {
				return err
			}
			if uint64(idx) < want {
				return nil // a second copy of a row written twice
			}
			if uint64(idx) != want {
				return fmt.Errorf("row %d of %s by %q is missing from the log", p.base+want, scope, p.id)
			}
			out = append(out, hoststore.Row{Index: hoststore.RowIndex(p.base + want), Data: sqlitedb.NonNil(data)})
			want++
			return nil
		})
	if err == nil && want != p.hi-p.base {
		err = fmt.Errorf("row %d of %s by %q is missing from the log", p.base+want, scope, p.id)
	}
	return out, err
}
