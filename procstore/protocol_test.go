package procstore_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/conform-spi/conform/harness"
	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/procstore"
)

const envHarnessChild = "PROCSTORE_HARNESS_CHILD" // python or go: what TestSchemaHarnessChild certifies

// schemaRows are the rows TestMessagesMatchTheSchema runs: between them,
// every request, at calls, and every error kind but the two a correct
// store answers only on trouble (indeterminate, unavailable).
const schemaRows = "row:acquire-empty || row:kill || row:stale-fence || row:same-version || row:retry"

// pythonStore is the Python example's command line.
func pythonStore(t *testing.T) string {
	t.Helper()
	python := "/usr/bin/python3" // scripts/test.sh installs it
	if _, err := os.Stat(python); err != nil {
		t.Fatalf("no %s (scripts/test.sh installs it): %v", python, err)
	}
	script, err := filepath.Abs("../examples/python-sqlite/store.py")
	if err != nil {
		t.Fatal(err)
	}
	return python + " " + script
}

// TestMessagesMatchTheSchema certifies the host store chapter over the
// Python example and over the SQLite store served by package serve, each
// process behind a tee that logs every line, and checks every line of both
// directions against docs/store-process-protocol.schema.json, each ok
// result against the result of its request's op.
func TestMessagesMatchTheSchema(t *testing.T) {
	s, err := loadSchema("../docs/store-process-protocol.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, target := range []string{"python", "go"} {
		t.Run(target, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			logPath := filepath.Join(dir, "lines")
			cmd := exec.Command(os.Args[0], "-test.run", "^TestSchemaHarnessChild$", "-test.v", "-test.count=1")
			cmd.Env = append(os.Environ(), envHarnessChild+"="+target, envTeeLog+"="+logPath, "CONFORM_REPORT_DIR="+filepath.Join(dir, "report"))
			if target == "python" {
				cmd.Env = append(cmd.Env, envTeeCmd+"="+pythonStore(t))
			}
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("the harness over the %s store: %v\n%s", target, err, out)
			}
			checkLog(t, s, logPath)
		})
	}
}

// TestSchemaHarnessChild is TestMessagesMatchTheSchema's child: it runs
// the host store chapter over a tee'd store process.
func TestSchemaHarnessChild(t *testing.T) {
	target := os.Getenv(envHarnessChild)
	if target == "" {
		t.Skip("run by TestMessagesMatchTheSchema")
	}
	env := []string{envChild + "=tee", envTeeLog + "=" + os.Getenv(envTeeLog)}
	if target == "go" {
		env = append(env, envTeeCmd+"="+os.Args[0], envTarget+"=serve-sqlite")
	} else {
		env = append(env, envTeeCmd+"="+os.Getenv(envTeeCmd))
	}
	harness.Run(t, func(context.Context) (hoststore.HostStoreFactory, error) {
		return procstore.New([]string{os.Args[0]}, procstore.WithEnv(env...))
	}, harness.WithLabelFilter(schemaRows), harness.WithStore("exec:"+target),
		// The lines are what this test checks, not the time: under -race a
		// read of megabytes through the tee can take seconds.
		harness.WithCallTimeout(time.Minute))
}

// resultDef is the schema definition of an ok result of op.
func resultDef(op string) string {
	switch op {
	case "renew_fence", "commit", "lapse_fence_leases":
		return "empty_result"
	}
	return op + "_result"
}

func checkLog(t *testing.T, s *schema, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ops := map[string]string{} // "pid id" -> op
	seen := map[string]int{}
	br := bufio.NewReaderSize(f, 1<<20)
	n := 0
	for {
		line, err := br.ReadBytes('\n')
		if len(line) == 0 {
			if err == nil {
				continue
			}
			break
		}
		n++
		pid, rest, _ := bytes.Cut(line, []byte(" "))
		dir, msg, _ := bytes.Cut(rest, []byte(" "))
		msg = bytes.TrimSuffix(msg, []byte("\n"))
		var head struct {
			ID    *uint64         `json:"id"`
			Call  *uint64         `json:"call"`
			Op    string          `json:"op"`
			OK    json.RawMessage `json:"ok"`
			Error *struct {
				Kind string `json:"kind"`
			} `json:"error"`
		}
		_ = json.Unmarshal(msg, &head)
		def := "harness_message"
		if string(dir) == "S" {
			def = "store_message"
		}
		if err := s.check(msg, def); err != nil {
			t.Errorf("line %d (%s): %v\n%s", n, def, err, clip(msg))
			continue
		}
		if head.ID == nil {
			if head.Op != "" {
				seen["call "+head.Op]++
			}
			continue
		}
		key := string(pid) + " " + strconv.FormatUint(*head.ID, 10)
		if string(dir) == "H" {
			ops[key] = head.Op
			seen[head.Op]++
			continue
		}
		op := ops[key]
		if op == "" {
			t.Errorf("line %d: an answer to id %d that the harness never sent", n, *head.ID)
			continue
		}
		if head.Error != nil {
			seen["error "+head.Error.Kind]++
			continue
		}
		if err := s.check(head.OK, resultDef(op)); err != nil {
			t.Errorf("line %d (%s): %v\n%s", n, resultDef(op), err, clip(msg))
		}
	}
	t.Logf("%d lines checked: %v", n, seen)
	for _, want := range []string{"hello", "acquire_fence", "renew_fence", "load_head", "list_heads", "read_rows", "commit", "lapse_fence_leases", "call at", "error held", "error fenced_out", "error conflict", "error invalid"} {
		if seen[want] == 0 {
			t.Errorf("no %q in the log: the chapter did not exercise it", want)
		}
	}
}

func clip(b []byte) string {
	s := string(b)
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return strings.TrimSpace(s)
}
