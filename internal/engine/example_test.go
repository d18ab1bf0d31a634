package engine_test

import (
	"fmt"
	"io"
	"log"
	"os"

	"github.com/conform-spi/conform/internal/engine"
	"github.com/conform-spi/conform/reports"
)

// The examples that take a t are the body of a store's TestConform, the
// `go test` that certifies it. Each engine.Run is a run of its own.

// Command.Run is Main without the exit: a test of the command, or a
// wrapper, calls it with its own writers and gets the exit code.
func ExampleCommand_Run() {
	c := engine.Command{
		Default: "mystore:",
		Extra: map[string]func(args []string, stdout, stderr io.Writer) int{
			"greet": func(args []string, stdout, _ io.Writer) int {
				fmt.Fprintln(stdout, "hello,", args[0])
				return 0
			},
		},
	}
	code := c.Run([]string{"greet", "store author"}, os.Stdout, os.Stdout)
	fmt.Println("exit", code)
	code = c.Run([]string{"frobnicate"}, io.Discard, io.Discard)
	fmt.Println("exit", code)
	// Output:
	// hello, store author
	// exit 0
	// exit 2
}

func ExampleParseRepro() {
	r, err := engine.ParseRepro("v1;seed=42;row=kill;fp=commit-locked%3Dsleep%2820%29")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(r.Seed, r.Row, r.Failpoints)
	_, err = engine.ParseRepro("v1;row=kill")
	fmt.Println(err)
	// Output:
	// 42 kill [commit-locked=sleep(20)]
	// repro "v1;row=kill": no seed
}

func ExampleRepro_String() {
	r := engine.Repro{Seed: 42, Row: "kill", Failpoints: []string{"commit-locked=sleep(20)"}, Store: "reference:"}
	fmt.Println(r)
	// Output:
	// v1;seed=42;row=kill;fp=commit-locked%3Dsleep%2820%29;store=reference%3A
}

func ExampleReproLine() {
	fmt.Println(engine.ReproLine(engine.Repro{Seed: 42, Row: "kill"}))
	// Output:
	// conform reproduce 'v1;seed=42;row=kill'   (under go test: CONFORM_REPRO='v1;seed=42;row=kill' go test ./...)
}

func ExampleValidateLabelFilter() {
	fmt.Println(engine.ValidateLabelFilter("row:kill || ob:5"))
	fmt.Println(engine.ValidateLabelFilter("row:kill &&") != nil)
	// Output:
	// <nil>
	// true
}

// A CI step reads back the report a run left and judges it.
func ExampleReadReport() {
	dir, err := os.MkdirTemp("", "conform-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	// A run leaves its reports in dir; this one stands in for it.
	if err := reports.WriteAll(dir, &reports.Run{Tool: "conform", Store: "mystore", Seed: 42,
		Rows: []reports.Row{{Chapter: "host-store", ID: "kill", Status: reports.StatusPassed}}}); err != nil {
		log.Fatal(err)
	}
	run, err := engine.ReadReport(dir)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(run.Store, run.Seed, run.Verdict())
	// Output:
	// mystore 42 conformant
}
