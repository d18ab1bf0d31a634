package appendonly

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sort"

	"github.com/conform-spi/conform/hoststore"
)

// readLog reads the log and resolves it: markers first, then acquire rows,
// then update rows, so that whatever a marker it read closes, and every
// acquire ordered before that marker, is there when read (see the package
// doc).
func (s *Store) readLog(ctx context.Context) (map[hoststore.ScopeRef]*view, error) {
	var markers []logMarker
	err := s.query(ctx, `SELECT seq, commit_id, token FROM markers ORDER BY seq`, nil, func(r *sql.Rows) error {
		var m logMarker
		var id string
		var tok int64
		if err := r.Scan(&m.seq, &id, &tok); err != nil {
			return err
		}
		m.id, m.token = hoststore.CommitID(id), uint64(tok)
		markers = append(markers, m)
		return nil
	})
	if err != nil {
		return nil, err
	}
	var acquires []logAcquire
	err = s.query(ctx, `SELECT seq, token FROM fences WHERE kind = 'acquire' ORDER BY seq`, nil, func(r *sql.Rows) error {
		var a logAcquire
		var tok int64
		if err := r.Scan(&a.seq, &tok); err != nil {
			return err
		}
		a.token = uint64(tok)
		acquires = append(acquires, a)
		return nil
	})
	if err != nil {
		return nil, err
	}
	var updates []logUpdate
	err = s.query(ctx, `SELECT commit_id, kind, name, previous, next, has_head, truncate_after, drop_before, deleted, appended
		FROM updates_log ORDER BY rowid`, nil, func(r *sql.Rows) error {
		var u logUpdate
		var id string
		var kind, next, hasHead, deleted, appended int64
		var name []byte
		var prev, trunc, drop sql.NullInt64
		if err := r.Scan(&id, &kind, &name, &prev, &next, &hasHead, &trunc, &drop, &deleted, &appended); err != nil {
			return err
		}
		u.id, u.scope = hoststore.CommitID(id), hoststore.ScopeRef{Kind: hoststore.ScopeKind(kind), Name: hoststore.ScopeName(name)}
		u.previous, u.next = uint64(prev.Int64), uint64(next)
		u.hasHead, u.deleted, u.appended = hasHead != 0, deleted != 0, uint64(appended)
		if trunc.Valid {
			u.truncAfter = hoststore.Ptr(uint64(trunc.Int64))
		}
		if drop.Valid {
			u.dropBefore = hoststore.Ptr(uint64(drop.Int64))
		}
		updates = append(updates, u)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return resolve(markers, acquires, updates), nil
}

// query runs a read and calls row for every row of its answer.
func (s *Store) query(ctx context.Context, q string, args []any, row func(*sql.Rows) error) error {
	rows, err := s.read.QueryContext(ctx, q, args...)
	if err != nil {
		return err
	}
	for rows.Next() {
		if err := row(rows); err != nil {
			return errors.Join(err, rows.Close())
		}
	}
	return errors.Join(rows.Err(), rows.Close())
}

// head fetches the head that batch id wrote for ref.
func (s *Store) head(ctx context.Context, ref hoststore.ScopeRef, id hoststore.CommitID) ([]byte, error) {
	var head []byte
	err := s.read.QueryRowContext(ctx,
		`SELECT head FROM updates_log WHERE commit_id = ? AND kind = ? AND name = ? AND has_head = 1 LIMIT 1`,
		string(id), int64(ref.Kind), []byte(ref.Name)).Scan(&head)
	if err != nil {
		return nil, fmt.Errorf("head of %s by %q: %w", ref, id, err)
	}
	return nonNil(head), nil
}

// LoadHead answers the scope's visible head, or nil, nil when the scope was
// never created, was deleted, or only batches a load hides wrote it.
func (s *Store) LoadHead(ctx context.Context, scope hoststore.ScopeRef) (*hoststore.VersionedHead, error) {
	if err := scope.Validate(); err != nil {
		return nil, &hoststore.InvalidError{Detail: "load head: " + err.Error()}
	}
	if err := s.gone("load head"); err != nil {
		return nil, err
	}
	octx, done := s.op(ctx)
	defer done()
	views, err := s.readLog(octx)
	if err != nil {
		return nil, s.unavailable(ctx, "load head: read log", err)
	}
	v := views[scope]
	if v == nil || v.deleted {
		return nil, nil
	}
	head, err := s.head(octx, scope, v.headID)
	if err != nil {
		return nil, s.unavailable(ctx, "load head", err)
	}
	return &hoststore.VersionedHead{Version: v.version, CommitID: v.id, Head: head}, nil
}

// ListHeads answers the visible scopes of kind whose names sort after
// after, in byte order of their names, each with its visible head, at most
// limit. Next is the last name returned when more follow, nil when the
// listing has ended. limit <= 0 is *hoststore.InvalidError.
func (s *Store) ListHeads(ctx context.Context, kind hoststore.ScopeKind, after *hoststore.ScopeName, limit int) (hoststore.HeadPage, error) {
	if !kind.Valid() {
		return hoststore.HeadPage{}, &hoststore.InvalidError{Detail: fmt.Sprintf("list heads: kind %d is not a kind", uint8(kind))}
	}
	if limit <= 0 {
		return hoststore.HeadPage{}, &hoststore.InvalidError{Detail: fmt.Sprintf("list heads: limit %d is not positive", limit)}
	}
	if err := s.gone("list heads"); err != nil {
		return hoststore.HeadPage{}, err
	}
	octx, done := s.op(ctx)
	defer done()
	views, err := s.readLog(octx)
	if err != nil {
		return hoststore.HeadPage{}, s.unavailable(ctx, "list heads: read log", err)
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
			return hoststore.HeadPage{}, s.unavailable(ctx, "list heads", err)
		}
		page.Heads = append(page.Heads, hoststore.NamedHead{Name: name, Head: hoststore.VersionedHead{Version: v.version, CommitID: v.id, Head: head}})
	}
	return page, nil
}

// ReadRows answers the scope's visible rows from index from, in index
// order, at most limit. A from below the first visible row is
// *hoststore.InvalidError; a scope that does not exist has no rows; limit
// <= 0 is *hoststore.InvalidError.
func (s *Store) ReadRows(ctx context.Context, scope hoststore.ScopeRef, from hoststore.RowIndex, limit int) ([]hoststore.Row, error) {
	if err := scope.Validate(); err != nil {
		return nil, &hoststore.InvalidError{Detail: "read rows: " + err.Error()}
	}
	if limit <= 0 {
		return nil, &hoststore.InvalidError{Detail: fmt.Sprintf("read rows: limit %d is not positive", limit)}
	}
	if err := s.gone("read rows"); err != nil {
		return nil, err
	}
	octx, done := s.op(ctx)
	defer done()
	views, err := s.readLog(octx)
	if err != nil {
		return nil, s.unavailable(ctx, "read rows: read log", err)
	}
	out := []hoststore.Row{}
	v := views[scope]
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
			return nil, s.unavailable(ctx, "read rows", err)
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
			out = append(out, hoststore.Row{Index: hoststore.RowIndex(p.base + want), Data: nonNil(data)})
			want++
			return nil
		})
	if err == nil && want != p.hi-p.base {
		err = fmt.Errorf("row %d of %s by %q is missing from the log", p.base+want, scope, p.id)
	}
	return out, err
}
