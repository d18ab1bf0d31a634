package handles

import "testing"

type handle struct {
	set    *Set[*handle]
	killed bool
}

func (h *handle) Kill() {
	h.killed = true
	h.set.Remove(h)
}

// TestCloseKillsOpenHandles: Close kills the handles still open, not the
// removed ones, and refuses later Adds.
func TestCloseKillsOpenHandles(t *testing.T) {
	var s Set[*handle]
	a, b := &handle{set: &s}, &handle{set: &s}
	if !s.Add(a) || !s.Add(b) {
		t.Fatal("Add on an open Set returned false")
	}
	s.Remove(b)
	s.Close()
	if !a.killed {
		t.Error("Close did not kill an open handle")
	}
	if b.killed {
		t.Error("Close killed a removed handle")
	}
	c := &handle{set: &s}
	if s.Add(c) {
		t.Error("Add after Close returned true")
	}
	s.Close()
	if c.killed {
		t.Error("a second Close killed a handle Add refused")
	}
}
