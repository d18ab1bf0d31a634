package appendonly_test

import "testing"

// TestConformance certifies the store with every chapter: conformant, and
// every row exercised (the in-store failpoints are in place).
func TestConformance(t *testing.T) { pkg.TestConformance(t) }
