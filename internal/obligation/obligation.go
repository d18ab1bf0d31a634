// Package obligation is the catalogue of what conform checks: each
// obligation's ID, title, rule and place in docs/. The chapters label their
// rows with these IDs, and the checker names them in its findings. The
// package links no test framework, so the checker can use it alone.
// docs/obligations.tsv is generated from it (go test -run TestTSV -update).
package obligation

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
	// ObWriter is the writer rules, which the long-run and
	// durable-worker chapters check a writer keeps over the store.
	ObWriter reports.ObligationID = "ob:writer"
	// ObRun is what a scripted run over the store shows after restarts.
	ObRun reports.ObligationID = "ob:run"
)

// Catalogue is a list of obligations, each stated in our own words with
// the place in docs/ that explains it.
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

// All is the catalogue the chapters check: the nine obligations of
// the Host Store SPI, the fence-lease rules, the operations' own answers,
// the error contract and the writer rules and scripted runs of the long-run
// and durable-worker chapters.
var All = Catalogue{
	{ID: ObAllOrNothing, Title: "All or nothing", Statement: "Every load shows a batch in all the scopes it writes or in none of them, while the commit runs and after any crash.", Doc: "docs/host-store-contract.md#ob-1"},
	{ID: ObDurable, Title: "Durable once acknowledged", Statement: "Once Commit returns nil the batch is permanent: it outlives its writer, and every handle opened later loads it, unless fencing hides it at load.", Doc: "docs/host-store-contract.md#ob-2"},
	{ID: ObRetry, Title: "Idempotent retry", Statement: "A commit id sent twice, from any handle and at any time, takes effect once. Returning nil for a batch that already landed is the usual way; refusing the duplicate, or collapsing it at load, also counts.", Doc: "docs/host-store-contract.md#ob-3"},
	{ID: ObVersionChain, Title: "One version chain per scope", Statement: "When two batches claim the same version of a scope, every load picks the same winner and the loser vanishes from all of its scopes. A higher fence token always beats a lower one.", Doc: "docs/host-store-contract.md#ob-4"},
	{ID: ObFencing, Title: "Fencing", Statement: "Once a token is acquired, a batch with a lower token whose commit point comes later never becomes visible, and every batch whose commit point came earlier stays visible. Commit points follow the store's own order, never a writer's clock.", Doc: "docs/host-store-contract.md#ob-5"},
	{ID: ObRemoval, Title: "Logical removal", Statement: "TruncateAfter, DropBefore and Delete change what loads see in the same step as the rest of their batch. Removing the bytes themselves can wait.", Doc: "docs/host-store-contract.md#ob-6"},
	{ID: ObOrder, Title: "Order", Statement: "A scope's rows load in the order they were committed, each at its stable index.", Doc: "docs/host-store-contract.md#ob-7"},
	{ID: ObIndependence, Title: "Independence", Statement: "Commits to different scopes never wait for each other: nothing realm-wide is held on the commit path, and the fence is only read there.", Doc: "docs/host-store-contract.md#ob-8"},
	{ID: ObListing, Title: "Listing", Statement: "ListHeads shows a scope from the moment its creating batch is visible until the moment its deleting batch is visible, with the head a load would show.", Doc: "docs/host-store-contract.md#ob-9"},
	{ID: ObFenceLease, Title: "Fence leases", Statement: "AcquireFence issues a durable token above every earlier one and records a lease on the store's clock; Exclusive returns Held while a holder is live, Takeover reports what was left of its lease. RenewFence starts a fresh lease for the highest token, even a lapsed one, and returns FencedOut to a superseded token.", Doc: "docs/host-store-contract.md#fence-leases"},
	{ID: ObOperations, Title: "Operations", Statement: "LoadHead, ListHeads, ReadRows and Commit return what the contract says: only visible heads and rows, names in byte order, at most limit entries, stable row indices, Invalid below the first visible row. Commit returns nil only once the batch is durable.", Doc: "docs/host-store-contract.md#operations"},
	{ID: ObErrors, Title: "Error contract", Statement: "A store returns nil, one of the six hoststore error types, or ctx.Err() once the caller's context ended; Unavailable promises that nothing was applied, and an unknown commit outcome is Indeterminate. A panic, a hang or any other error is a breach.", Doc: "docs/host-store-contract.md#errors"},
	{ID: ObWriter, Title: "Writer rules", Statement: "The writer over the store acquires exclusively, renews on time, fences itself on its own clock, waits out a superseded lease, and settles a commit of unknown outcome before it writes those scopes again. The long-run and durable-worker chapters check that package writer keeps these rules.", Doc: "docs/host-store-contract.md#writer-rules"},
	{ID: ObRun, Title: "Scripted runs", Statement: "A scripted run killed at any point of a round restarts from its newest landed commit under the same run id, or from its input as a new run when nothing landed. No landed round is lost and none is committed twice.", Doc: "docs/host-store-contract.md#scripted-runs"},
}

// ByID returns the obligation of All with id, if All holds it.
func ByID(id reports.ObligationID) (reports.Obligation, bool) { return All.ByID(id) }
