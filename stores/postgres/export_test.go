package postgres

// What the tests of package postgres_test use to play a fence operation's
// statements by hand, stopping between them.
const (
	SQLFenceRead   = sqlFenceRead
	SQLFenceIssue  = sqlFenceIssue
	SQLFenceRenew  = sqlFenceRenew
	SQLFenceShared = sqlFenceShared
	SQLLapse       = sqlLapse
)

// FenceLockKey returns the key of the realm's fence lock.
func (f *Factory) FenceLockKey() int64 { return f.lockKey }
