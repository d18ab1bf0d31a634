package longrun

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/conform-spi/conform/internal/chapter/scripted"
)

// script is a scripted run: a deterministic fake model and fake tools,
// whose answers follow from the seed, the round and the transcript so far.
// Everything the run commits follows from it, so the reference transcript
// is the script played without a store.
type script struct {
	seed   uint64
	rounds int
	unit   time.Duration // how long the fakes take, in steps of this
	mem    int           // bytes the run's memory grows by per round
	out    int           // typical bytes of one tool output
}

// answer is the model's answer in one round.
type answer struct {
	text  string
	tools []string // the tool calls' arguments, in order
	think time.Duration
}

func (s *script) rng(parts ...string) *rand.Rand { return scripted.Rand(s.seed, parts...) }

// model answers round k after a transcript whose digest is digest.
func (s *script) model(k int, digest string) answer {
	r := s.rng("model", strconv.Itoa(k), digest)
	m := answer{text: fmt.Sprintf("plan %d/%08x", k, r.Uint32()), think: s.unit * time.Duration(1+r.IntN(3))}
	for i := range 1 + r.IntN(2) {
		m.tools = append(m.tools, fmt.Sprintf("call-%d-%d-%04x", k, i, r.IntN(1<<16)))
	}
	return m
}

// tool returns one tool call, and how long it took.
func (s *script) tool(arg string) ([]byte, time.Duration) {
	r := s.rng("tool", arg)
	return scripted.Fill(r, s.out/2+r.IntN(s.out)), s.unit * time.Duration(1+r.IntN(2))
}

// state is the run's state after a round: what its Session scope's head
// holds.
type state struct {
	round  int
	digest string
	memory []byte
}

const stateMagic = "longrun/1"

func (st state) encode() []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s\nround %d\ndigest %s\n", stateMagic, st.round, st.digest)
	b.Write(st.memory)
	return b.Bytes()
}

func decodeState(v []byte) (state, error) {
	parts := bytes.SplitN(v, []byte("\n"), 4)
	if len(parts) != 4 || string(parts[0]) != stateMagic {
		return state{}, fmt.Errorf("not a long-run state: %.40q", v)
	}
	var st state
	if _, err := fmt.Sscanf(string(parts[1]), "round %d", &st.round); err != nil {
		return state{}, fmt.Errorf("state round: %w", err)
	}
	d, ok := strings.CutPrefix(string(parts[2]), "digest ")
	if !ok {
		return state{}, fmt.Errorf("state digest line %q", parts[2])
	}
	st.digest, st.memory = d, parts[3]
	return st, nil
}

// initial is the state before round 1.
func (s *script) initial() state {
	h := sha256.Sum256([]byte("input " + strconv.FormatUint(s.seed, 10)))
	return state{digest: hex.EncodeToString(h[:16]), memory: []byte{}}
}

// round is what one round commits.
type round struct {
	row   []byte // appended to the Session scope
	state state  // the Session scope's new head
	out   []byte // the round's Record scope: every tool output
}

// play computes round k's commit from the state before it and what the
// model and tools answered.
func (s *script) play(k int, prev state, m answer, outs [][]byte) round {
	var row bytes.Buffer
	fmt.Fprintf(&row, "round %d\nmodel %s\n", k, m.text)
	var all []byte
	for i, o := range outs {
		sum := sha256.Sum256(o)
		fmt.Fprintf(&row, "tool %s -> %d bytes %x\n", m.tools[i], len(o), sum[:8])
		all = append(all, o...)
	}
	h := sha256.Sum256([]byte(prev.digest + "\x00" + row.String()))
	d := hex.EncodeToString(h[:16])
	mem := append(bytes.Clone(prev.memory), scripted.Fill(s.rng("memory", strconv.Itoa(k), d), s.mem)...)
	return round{row: row.Bytes(), state: state{round: k, digest: d, memory: mem}, out: all}
}

// reference plays the whole script without a store: the transcript every
// run must commit, round by round.
func (s *script) reference() []round {
	st := s.initial()
	out := make([]round, 0, s.rounds)
	for k := 1; k <= s.rounds; k++ {
		m := s.model(k, st.digest)
		var outs [][]byte
		for _, a := range m.tools {
			o, _ := s.tool(a)
			outs = append(outs, o)
		}
		r := s.play(k, st, m, outs)
		out = append(out, r)
		st = r.state
	}
	return out
}
