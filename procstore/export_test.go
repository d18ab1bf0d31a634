package procstore

// Pid returns the process id of a store process, for tests.
func Pid(s *Store) int { return s.cmd.Process.Pid }
