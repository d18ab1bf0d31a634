package appendonly

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/instore"
	"github.com/conform-spi/conform/stores/internal/sqlitedb"
)

// maxRequestBytes bounds the row data of one INSERT request: 7 MiB, so
// that a full 8 MiB batch is split (see the package doc, "Commit").
const maxRequestBytes = 7 << 20

// maxRequestRows bounds the rows of one INSERT request, well within
// SQLite's limit on bound parameters (five per row).
const maxRequestRows = 1000

// Commit appends the batch: its updates and rows, each INSERT in its own
// autocommit statement, then its marker, the commit point. nil means the
// marker is durable (synchronous=FULL); a load may still hide the batch
// (fenced out, or losing a version race), since this store keeps
// obligations 4 and 5 at load. A commit id that already has a marker has
// its updates and rows in the log already: a resend appends one more
// marker only, a new commit point, which a load ignores when an earlier
// marker of the id made the batch visible (obligation 3) and decides on its
// own when every earlier one lost. A token never issued returns
// *hoststore.InvalidError. See the package doc for the failpoint sites and
// the error mapping.
func (s *Store) Commit(ctx context.Context, b *hoststore.CommitBatch) error {
	octx, done, err := s.db.Call(ctx, "commit", sqlitedb.Batch(b))
	if err != nil {
		return err
	}
	defer done()
	id := b.CommitID()
	if err := instore.At(ctx, instore.CommitLocked, id); err != nil {
		return err
	}
	landed, err := s.landed(octx, id)
	if err != nil {
		return s.db.Unavailable(ctx, "commit: read markers", err)
	}
	if !landed {
		var top int64
		if err := s.db.Read.QueryRowContext(octx, `SELECT COALESCE(MAX(token), 0) FROM fences`).Scan(&top); err != nil {
			return s.db.Unavailable(ctx, "commit: read fences", err)
		}
		if b.Token() == 0 || b.Token() > hoststore.FenceToken(top) {
			return &hoststore.InvalidError{Detail: fmt.Sprintf("commit %q: token %d was never issued (highest is %d)", id, b.Token(), top)}
		}
		for _, u := range b.Updates() {
			if err := s.appendUpdate(octx, id, u); err != nil {
				return s.db.Unavailable(ctx, "commit: append update", err)
			}
		}
	}
	if err := instore.At(ctx, instore.CommitBeforePoint, id); err != nil {
		return err
	}
	if err := s.appendMarker(ctx, octx, b); err != nil {
		return err
	}
	if err := instore.At(ctx, instore.CommitAfterPoint, id); err != nil {
		return err
	}
	if s.db.Killed() {
		return &hoststore.IndeterminateError{Detail: fmt.Sprintf("commit %q: the handle was killed after the marker; the answer is lost", id)}
	}
	return nil
}

// landed reports whether id already has a marker.
func (s *Store) landed(ctx context.Context, id hoststore.CommitID) (bool, error) {
	var one int
	err := s.db.Read.QueryRowContext(ctx, `SELECT 1 FROM markers WHERE commit_id = ? LIMIT 1`, string(id)).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

// appendUpdate appends one update row, then its rows in requests of at
// most maxRequestBytes of data.
func (s *Store) appendUpdate(ctx context.Context, id hoststore.CommitID, u hoststore.ScopeUpdate) error {
	var prev, trunc, drop any
	if u.Previous != nil {
		prev = int64(uint64(*u.Previous))
	}
	if u.TruncateAfter != nil {
		trunc = clampIndex(uint64(*u.TruncateAfter))
	}
	if u.DropBefore != nil {
		drop = clampIndex(uint64(*u.DropBefore))
	}
	var head []byte
	if u.Head != nil {
		head = sqlitedb.NonNil(*u.Head)
	}
	kind, name := int64(u.Scope.Kind), []byte(u.Scope.Name)
	_, err := s.insert(ctx,
		`INSERT INTO updates_log (commit_id, kind, name, previous, next, has_head, truncate_after, drop_before, deleted, appended, head)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		string(id), kind, name, prev, int64(uint64(u.Next)), boolInt(u.Head != nil), trunc, drop, boolInt(u.Delete), int64(len(u.Append)), head)
	if err != nil {
		return err
	}
	for first := 0; first < len(u.Append); {
		last, size := first, 0
		for last < len(u.Append) && last-first < maxRequestRows && (last == first || size+len(u.Append[last]) <= maxRequestBytes) {
			size += len(u.Append[last])
			last++
		}
		var q strings.Builder
		q.WriteString(`INSERT INTO rows_log (commit_id, kind, name, idx, data) VALUES `)
		args := make([]any, 0, 5*(last-first))
		for i := first; i < last; i++ {
			if i > first {
				q.WriteString(", ")
			}
			q.WriteString("(?, ?, ?, ?, ?)")
			args = append(args, string(id), kind, name, int64(i), sqlitedb.NonNil(u.Append[i]))
		}
		if _, err := s.insert(ctx, q.String(), args...); err != nil {
			return err
		}
		first = last
	}
	return nil
}

// appendMarker appends the batch's marker, its commit point. ctx is the
// caller's, octx the call's (ended by Kill too).
func (s *Store) appendMarker(ctx, octx context.Context, b *hoststore.CommitBatch) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err := s.db.Gone("commit"); err != nil {
		return err
	}
	_, err := s.insert(octx, `INSERT INTO markers (seq, commit_id, token) VALUES (`+nextSeq+`, ?, ?)`, string(b.CommitID()), int64(b.Token()))
	switch {
	case err == nil:
		return nil
	case sqlitedb.Busy(err):
		return s.db.Unavailable(ctx, "commit: append marker", err)
	default:
		return &hoststore.IndeterminateError{Detail: fmt.Sprintf("commit %q: append marker: %s", b.CommitID(), sqlitedb.Describe(err))}
	}
}

// clampIndex stores a row index as an SQLite integer. An index above the
// largest one is past every end a scope can reach, where TruncateAfter and
// DropBefore act as at the largest, so clamping keeps their meaning.
func clampIndex(i uint64) int64 {
	if i > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(i)
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}
