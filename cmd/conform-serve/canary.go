//go:build conformcanary

package main

import (
	"fmt"
	"io"
	"os"

	"github.com/conform-spi/conform/internal/proccanary"
)

// With the conformcanary tag, CONFORMSERVE_CANARY names a way the served
// process breaks the protocol (package internal/proccanary), for
// conform's own tests.
func init() {
	mode := os.Getenv("CONFORMSERVE_CANARY")
	if mode == "" {
		return
	}
	w, err := proccanary.Writer(mode, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "conform-serve:", err)
		os.Exit(2)
	}
	stdout = w
}

var _ io.Writer = stdout
