// Package appendonly provides a host store that keeps each realm as an
// append-only log in one local SQLite file. It keeps obligations 4 and 5 at
// load, by resolving the log, instead of refusing at commit
// (docs/host-store-contract.md#ob-4, #ob-5). Use it as a worked example of
// a store on a backend without updates or transactions, or to see that the
// harness accepts those ways.
//
// It is built on modernc.org/sqlite (driver "sqlite") and on the public API
// of conform only (package hoststore, and instore.At for the three in-store
// failpoints), as a third party would write it.
//
// The store never runs UPDATE or DELETE, and no transaction spans a batch:
// every write is one INSERT in its own autocommit statement. SQLite
// serialises writes, so every INSERT lands at once, whole or not at all.
//
// # Realm, handles and URL
//
// A realm is one database file; the URL form is
//
//	appendonly+sqlite:PATH
//
// (PATH is created with its schema when absent; a certifying run wants a
// new path, since a realm starts empty). Every Factory.Open is a new
// process: new pools over the file, sharing nothing with earlier handles and
// caching nothing between calls. The file runs in journal_mode=WAL with
// synchronous=FULL and a busy_timeout.
//
// # Tables
//
//   - updates_log(commit_id, kind, name, previous, next, has_head,
//     truncate_after, drop_before, deleted, appended, head): one row per
//     update of a batch, tagged with its commit id. appended counts the
//     rows it appends; it is what lets a load number them.
//   - rows_log(commit_id, kind, name, idx, data): the appended rows, tagged
//     with the commit id. idx is the row's ordinal within its update's
//     append list, not its final index: the writer sends no indices, and
//     the first appended row gets the end index that the update's removals
//     leave, which only a load that replays the scope's chain knows. The natural
//     key (commit_id, kind, name, idx) is the row's insert id: a retried
//     insert may write a row twice, and loads keep one copy.
//   - markers(seq, commit_id, token): one row closes a send of a batch; its
//     seq is that send's commit point. A resend of a commit id that has a
//     marker appends one more marker only (its updates and rows are in the
//     log already).
//   - fences(seq, token, kind, lease_expiry): an acquire appends a row of
//     kind "acquire" with the next token; a renew appends a row of kind
//     "renew" with the holder's new lease.
//   - clock(seq, offset_ns): the realm's clock offset; the latest (largest)
//     offset counts.
//
// # Commit point and order
//
// markers.seq and fences.seq are drawn from one order shared by both
// tables: each INSERT computes its seq as one plus the largest seq of
// either table, inside the statement itself. SQLite runs one writing
// statement at a time, holding its write lock from the statement's start,
// so seqs are unique, increase in the order the rows land, and are assigned
// by the database, never by a writer's clock. A marker's seq is the batch's
// commit point (docs/host-store-contract.md#ob-5); a fence row's seq says
// which commit points come after an acquire. Ties cannot occur.
//
// # Commit
//
// A commit appends every update of the batch, then its rows, then the
// marker, last. Rows go in INSERT requests of at most 7 MiB of row data
// each, a size a backend with request limits, such as a streaming insert
// API, would need. instore.CommitLocked sits before the first insert (this
// store takes no lock, so at that site it holds none),
// instore.CommitBeforePoint just before the marker insert and
// instore.CommitAfterPoint just after it. A busy insert is tried up to six
// times in all, with jittered backoff; the insert ids below make a repeated
// insert harmless. Before writing, a token never issued (0 or above the
// highest) returns *hoststore.InvalidError. A commit id that already has a
// marker writes no update or row again: the resend appends a new marker
// only, after the same two sites. Loads decide it (see Load, step 3): a
// batch visible at an earlier marker shows once and its later markers
// change nothing (obligation 3); a batch whose every earlier marker lost
// never happened, so the new marker is its first arrival, decided at its
// own commit point, as the reference decides a resend of a refused batch.
// The commit never returns *hoststore.ConflictError or
// *hoststore.FencedOutError: it returns nil once the marker is written,
// even for a batch that a load will hide, because obligations 4 and 5 are
// kept at load. The writer cannot tell the two ways
// apart (docs/host-store-contract.md#ob-5).
//
// # Load
//
// Every load replays the log; it caches nothing. A listing replays all of
// it: it reads the markers, then the acquire rows, then the update rows (in
// that order, without a transaction: anything a marker closes was written
// before it, and an acquire ordered before a marker was written before it
// too). A one-scope load (LoadHead, ReadRows) replays only the part of the
// log that decides the scope: the batches connected to it through the
// scopes they write (found through an index on the scope), since whether a
// send makes its batch visible depends on the scopes the batch writes, as
// the sends before it left them, and on nothing else; it first reads the
// largest marker seq and considers no marker beyond it, so that it resolves
// a prefix of the markers, as a listing does. Both resolve:
//
//  1. sends: every marker, in seq order; the update rows of a commit id
//     written twice (a retried commit) collapse to one copy;
//  2. fencing: a marker is out when some acquire row ordered before it
//     carries a higher token than its batch (obligation 5);
//  3. one version chain per scope (obligation 4), decided once per send,
//     at its commit point: walking the remaining markers in seq order from
//     a realm with no scope, a send makes its batch visible when, in every
//     scope the batch writes, the update's previous is the scope's version
//     as the visible batches before it left it (none for a create) and the
//     scope was not deleted: the reference's check at commit
//     (docs/host-store-contract.md#op-commit, steps 3 and 4), applied in the
//     order of the commit points. Otherwise the send loses, in every scope
//     of its batch, for good. A send that lost never happened: it changes
//     no scope, and nothing after its marker brings it back, not even a
//     later batch that creates the version it named. So the log up to any
//     marker decides every send in it as every longer log does, and every
//     load (which reads a prefix of the markers) agrees with every earlier
//     one; a batch turns visible only at a marker of its own. A marker of a
//     batch already visible changes nothing. Two sends that claim one
//     version: the first commit point wins. The higher token still wins
//     wherever the fence says it must: a batch with a lower token whose
//     marker comes after the acquire of a higher one was fenced out at
//     step 2, and one whose marker came before that acquire stays visible,
//     as obligation 5 asks (the new holder's clashing batch loses, as the
//     reference refuses it with *hoststore.ConflictError);
//  4. the scope's visible state replays its chain: TruncateAfter,
//     DropBefore, Append, Head, in that order; removed rows stay in the
//     log as written and are masked by the visible range [start, end)
//     (tombstones, obligation 6).
//
// The per-call replay is fine for the harness's sizes (a listing of a few
// thousand batches replays in milliseconds); a production store would
// cache resolved prefixes of the log, which the rule allows: a prefix, once
// resolved, never changes. Heads and rows are fetched only for what the
// load returns.
//
// # Fence and clock
//
// An acquire is one conditional INSERT … SELECT: the next token (the
// highest plus one) and its lease from now on the realm's clock, inserted
// only if the mode is Takeover or the holder of the highest token has no
// live lease. The acquire then reads its own row back, and the rows ordered
// before it to report a superseded lease. A renew is one conditional INSERT
// of a lease row, inserted only if its token is still the highest. "Now" is
// the wall clock, read by the inserting statement itself under SQLite's
// write lock (to the millisecond), plus the realm's clock offset, so fence
// rows record clocks in their order; Factory.LapseFenceLeases appends a
// clock row that moves the offset just past every recorded lease.
//
// # Errors and Kill
//
// A failure before the marker is written is *hoststore.UnavailableError
// (rows without a marker are garbage that no load shows); a failure of the
// marker insert other than SQLITE_BUSY is *hoststore.IndeterminateError. A
// context that ended before the marker insert returns ctx.Err(). Store.Kill
// cancels every call in flight and closes the pools; a commit killed before
// its marker leaves garbage only.
package appendonly
