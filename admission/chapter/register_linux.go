//go:build linux

package chapter

// register adds every row family.
func register(c *Config) {
	exclusionRows(c)
	processRows(c)
	orderRows(c)
	fileRows(c)
	filesystemRows(c)
	interopRows(c)
}
