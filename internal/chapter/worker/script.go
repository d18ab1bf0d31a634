package worker

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/conform-spi/conform/internal/chapter/scripted"
)

// script is the durable worker's input: jobs, each of a number of
// steps, whose outputs follow from the seed, the job and the step.
type script struct {
	seed uint64
	unit time.Duration // how long a step takes, in steps of this
	out  int           // typical bytes of one step's output
	jobs int
}

// steps returns how many steps job j has.
func (s *script) steps(j int) int { return 2 + scripted.Rand(s.seed, "steps", strconv.Itoa(j)).IntN(3) }

// step returns the output of step n of job j, and how long it took.
func (s *script) step(j, n int) ([]byte, time.Duration) {
	r := scripted.Rand(s.seed, "step", strconv.Itoa(j), strconv.Itoa(n))
	return scripted.Fill(r, s.out/2+r.IntN(s.out)), s.unit * time.Duration(1+r.IntN(3))
}

// state is a job's committed state: its Record scope's head.
type state struct {
	steps, done int
	result      string // digest of every output so far
	acc         []byte // every output so far
}

const stateMagic = "job/1"

func (st state) encode() []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s\nsteps %d done %d\nresult %s\n", stateMagic, st.steps, st.done, st.result)
	b.Write(st.acc)
	return b.Bytes()
}

func decodeState(v []byte) (state, error) {
	parts := bytes.SplitN(v, []byte("\n"), 4)
	if len(parts) != 4 || string(parts[0]) != stateMagic {
		return state{}, fmt.Errorf("not a job state: %.40q", v)
	}
	var st state
	if _, err := fmt.Sscanf(string(parts[1]), "steps %d done %d", &st.steps, &st.done); err != nil {
		return state{}, fmt.Errorf("job state: %w", err)
	}
	r, ok := strings.CutPrefix(string(parts[2]), "result ")
	if !ok {
		return state{}, fmt.Errorf("job state result line %q", parts[2])
	}
	st.result, st.acc = r, parts[3]
	return st, nil
}

// advance is the job's state and rows after step n with output out.
func (st state) advance(j, n int, out []byte) (state, [][]byte) {
	h := sha256.Sum256([]byte(st.result + "\x00" + string(out)))
	next := state{steps: st.steps, done: n, result: hex.EncodeToString(h[:16]), acc: append(bytes.Clone(st.acc), out...)}
	sum := sha256.Sum256(out)
	rows := [][]byte{[]byte(fmt.Sprintf("job %d step %d: %d bytes %x", j, n, len(out), sum[:8]))}
	if n == st.steps {
		rows = append(rows, []byte(fmt.Sprintf("job %d finished: %s", j, next.result)))
	}
	return next, rows
}

// initial is job j's state as submitted.
func (s *script) initial(j int) state {
	return state{steps: s.steps(j), result: "-", acc: []byte{}}
}

// expected is the reference: each job's state and rows after each step.
type expected struct {
	states [][]state  // [job-1][done]
	rows   [][][]byte // [job-1]: every row once finished
}

// reference plays every job without a store.
func (s *script) reference() expected {
	var ref expected
	for j := 1; j <= s.jobs; j++ {
		st := s.initial(j)
		states := []state{st}
		var rows [][]byte
		for n := 1; n <= st.steps; n++ {
			out, _ := s.step(j, n)
			var add [][]byte
			st, add = st.advance(j, n, out)
			states = append(states, st)
			rows = append(rows, add...)
		}
		ref.states = append(ref.states, states)
		ref.rows = append(ref.rows, rows)
	}
	return ref
}
