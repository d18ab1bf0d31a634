package procstore

// SetTrace makes f see every line of every process, as "H" (the
// harness's) or "S" (the store's); nil stops it. Set it before the first
// Open.
func SetTrace(f func(pid int, dir byte, line []byte)) { traceLine = f }

// Pid returns the process id of a store process, for tests.
func Pid(s *Store) int { return s.cmd.Process.Pid }
