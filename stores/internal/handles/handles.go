// Package handles keeps the open handles of one realm for the stores of
// this module, so that closing the realm's factory kills them.
package handles

import "sync"

// Handle is what a Set holds: a handle that can be killed as a dying
// process would be.
type Handle interface {
	comparable
	Kill()
}

// Set is the handles of one realm that are neither killed nor closed.
// The zero Set is empty and open. A Set is safe for concurrent use.
type Set[H Handle] struct {
	mu     sync.Mutex
	closed bool // set by Close
	open   map[H]struct{}
}

// Add records h as open. It returns false, recording nothing, when the Set
// is closed.
func (s *Set[H]) Add(h H) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	if s.open == nil {
		s.open = map[H]struct{}{}
	}
	s.open[h] = struct{}{}
	return true
}

// Remove drops h, killed or closed, from the open handles.
func (s *Set[H]) Remove(h H) {
	s.mu.Lock()
	delete(s.open, h)
	s.mu.Unlock()
}

// Close closes the Set, so that later Adds return false, and kills every
// handle still open. A handle's Kill runs outside the Set's lock, so it may
// call Remove.
func (s *Set[H]) Close() {
	s.mu.Lock()
	s.closed = true
	open := s.open
	s.open = nil
	s.mu.Unlock()
	for h := range open {
		h.Kill()
	}
}
