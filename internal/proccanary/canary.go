// Package proccanary breaks the store process protocol on purpose, for
// conform's own tests: a writer that mangles one answer of a served store
// the way a broken store process would.
package proccanary

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"sync"
)

// Modes lists the ways a canary breaks the protocol.
var Modes = []string{"garbage", "twice", "dies", "silent"}

// Nth is the answer a canary mangles (the handshake's not counted).
const Nth = 4

// Writer returns w with its Nth answer line mangled by mode:
//
//	garbage  the answer is replaced by a line that is no JSON
//	twice    the answer is written twice
//	dies     half the answer is written, then the process exits with status 3
//	silent   the answer is never written
//
// It returns an error for an unknown mode. The writer expects whole lines,
// as package serve writes them.
func Writer(mode string, w io.Writer) (io.Writer, error) {
	switch mode {
	case "garbage", "twice", "dies", "silent":
		return &writer{mode: mode, w: w}, nil
	}
	return nil, fmt.Errorf("unknown protocol canary %q; the canaries are %v", mode, Modes)
}

type writer struct {
	mode string
	w    io.Writer
	mu   sync.Mutex
	n    int
}

func (c *writer) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !bytes.HasPrefix(p, []byte(`{"id":`)) || bytes.HasPrefix(p, []byte(`{"id":0,`)) {
		return c.w.Write(p)
	}
	c.n++
	if c.n != Nth {
		return c.w.Write(p)
	}
	switch c.mode {
	case "garbage":
		_, err := c.w.Write([]byte("this is not a message\n"))
		return len(p), err
	case "twice":
		if _, err := c.w.Write(p); err != nil {
			return 0, err
		}
		return c.w.Write(p)
	case "dies":
		_, _ = c.w.Write(p[:len(p)/2])
		fmt.Fprintln(os.Stderr, "canary: dying in the middle of an answer")
		os.Exit(3)
	}
	return len(p), nil // silent
}
