//go:build !unix

package engine

import "os"

// openNoWait opens path for reading; outside Unix no named pipe blocks
// an open.
func openNoWait(path string) (*os.File, error) { return os.Open(path) }

// blockAgain does nothing outside Unix.
func blockAgain(*os.File) error { return nil }
