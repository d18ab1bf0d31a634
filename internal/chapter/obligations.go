package chapter

import (
	"github.com/conform-spi/conform/internal/obligation"
)

// The obligation IDs, as the labels "ob:N" select them; package obligation
// keeps them.
const (
	ObAllOrNothing = obligation.ObAllOrNothing
	ObDurable      = obligation.ObDurable
	ObRetry        = obligation.ObRetry
	ObVersionChain = obligation.ObVersionChain
	ObFencing      = obligation.ObFencing
	ObRemoval      = obligation.ObRemoval
	ObOrder        = obligation.ObOrder
	ObIndependence = obligation.ObIndependence
	ObListing      = obligation.ObListing
	ObFenceLease   = obligation.ObFenceLease
	ObErrors       = obligation.ObErrors
	ObOperations   = obligation.ObOperations
	ObWriter       = obligation.ObWriter
	ObRun          = obligation.ObRun
)

// Catalogue is a list of obligations (obligation.Catalogue).
type Catalogue = obligation.Catalogue

// Obligations is the catalogue the chapters check (obligation.All).
var Obligations = obligation.All
