//go:build unix

package engine

import (
	"os"
	"syscall"
)

// openNoWait opens path for reading without blocking on a named pipe that
// has no writer: the file is opened non-blocking (blockAgain clears it).
func openNoWait(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}

// blockAgain clears the non-blocking mode openNoWait set, once f is known
// to be a regular file.
func blockAgain(f *os.File) error {
	c, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := c.Control(func(fd uintptr) { serr = syscall.SetNonblock(int(fd), false) }); err != nil {
		return err
	}
	return serr
}
