package chapter

import "github.com/conform-spi/conform/reports"

// Obligation IDs, as the labels "ob:N" select them.
const (
	ObAllOrNothing reports.ObligationID = "ob:1"
	ObDurable      reports.ObligationID = "ob:2"
	ObRetry        reports.ObligationID = "ob:3"
	ObVersionChain reports.ObligationID = "ob:4"
	ObFencing      reports.ObligationID = "ob:5"
	ObRemoval      reports.ObligationID = "ob:6"
	ObOrder        reports.ObligationID = "ob:7"
	ObIndependence reports.ObligationID = "ob:8"
	ObListing      reports.ObligationID = "ob:9"
	ObFenceLease   reports.ObligationID = "ob:fence"
	ObErrors       reports.ObligationID = "ob:errors"
	ObOperations   reports.ObligationID = "ob:ops"
	// ObWriter is Core's writer rules, which the long-run and
	// durable-worker chapters check a writer keeps over the store.
	ObWriter reports.ObligationID = "ob:writer"
	// ObRun is what a scripted run over the store shows after restarts.
	ObRun reports.ObligationID = "ob:run"
)

// Catalogue is a list of obligations, each with the spec's words.
type Catalogue []reports.Obligation

// ByID returns the obligation with id, if the catalogue holds it.
func (c Catalogue) ByID(id reports.ObligationID) (reports.Obligation, bool) {
	for _, o := range c {
		if o.ID == id {
			return o, true
		}
	}
	return reports.Obligation{}, false
}

// Obligations is the catalogue the chapters check: the nine obligations of
// the Host Store SPI, the fence-lease rules, the operations' own answers,
// the error contract and the writer rules and scripted runs of the long-run
// and durable-worker chapters.
var Obligations = Catalogue{
	{ID: ObAllOrNothing, Title: "All or nothing", Quote: "A load shows a batch completely, in every scope it touches, or not at all."},
	{ID: ObDurable, Title: "Durable once acknowledged", Quote: "After commit answers Ok, the batch survives a writer crash, and every later load shows it, from this writer or any later one, unless obligation 5 hides it."},
	{ID: ObRetry, Title: "Idempotent retry", Quote: "A commit id sent twice acts once. A store may refuse the duplicate or collapse it at load; answering Ok to a retry of a batch that already landed is the usual way."},
	{ID: ObVersionChain, Title: "One version chain per scope", Quote: "If two exist anyway (a fenced-out writer, a bug), every load must resolve them the same way. [...] a batch that loses in one scope is invisible in all of them. Whatever the rule, a batch carrying a lower fence token never beats one carrying a higher token at the same version."},
	{ID: ObFencing, Title: "Fencing", Quote: "After a token is acquired, a batch carrying a lower token whose commit point comes later never becomes visible. Every batch whose commit point comes before the acquire stays visible, whether or not its writer saw the acknowledgement: a load after the acquire shows it."},
	{ID: ObRemoval, Title: "Logical removal", Quote: "Truncate, drop and delete take effect for loads together with their batch."},
	{ID: ObOrder, Title: "Order", Quote: "Rows load in commit order."},
	{ID: ObIndependence, Title: "Independence", Quote: "No realm-wide lock, pointer, sequence or transaction on the commit path, and scopes commit concurrently."},
	{ID: ObListing, Title: "Listing", Quote: "A scope is listed once its creating batch is visible, and not after its deletion."},
	{ID: ObFenceLease, Title: "Fence leases", Quote: "acquire_fence answers a token higher than any acquired before in the realm, durably, and records the new holder's lease. With Exclusive, a live holder makes it answer Held. With Takeover, it supersedes any holder and reports what remained of that holder's lease (zero when no holder was live). renew_fence confirms that no token higher than token exists, and records a new lease for its holder from now, also when that holder's last lease has lapsed. Answers FencedOut when a higher token exists."},
	{ID: ObOperations, Title: "Operations", Quote: "load_head: the scope's visible head, or None when the scope was never created or was deleted. list_heads: visible scopes of kind whose names sort after after, in name order by the bytes of their names, at most limit; next is None when the listing has ended. read_rows: the scope's visible rows from index from, in index order, at most limit, ending early at the scope's end. A from below the first visible row is Invalid. A scope that does not exist has no rows. commit: applies one batch atomically. Ok means durable."},
	{ID: ObWriter, Title: "Core's writer rules", Quote: "The holder fences itself on its own clock: it makes no model call, dispatches nothing and commits nothing unless its last successful acquire or renew started less than the self-fence window ago. [...] After an acquire that supersedes a live holder, the new holder waits out FenceGrant::superseded_lease before it makes a model call or dispatches anything. [...] Core never reuses a commit id for different content, and never commits a scope's next version while an earlier commit touching that scope has an unknown outcome."},
	{ID: ObRun, Title: "Scripted runs", Quote: "The crate's long-run and durable-worker chapters run scripted runs over a store, kill them at chosen points of a round, and check that each restart continues from the last commit under the same run id, or, when nothing was committed yet, runs the input again as a new run."},
	{ID: ObErrors, Title: "Error contract", Quote: "Answer Unavailable only when nothing was applied. When you cannot tell whether a commit landed, answer Indeterminate. (Go shape: a store answers one of the six error types, or ctx.Err() when the context ended.)"},
}
