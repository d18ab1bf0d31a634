// Package spec is conform's spec runner: a tree of ordered containers and
// specs, built for one run, and the runner that runs it. A spec fails with
// Fail and skips with Skip, both of which end the spec's goroutine through
// a panic the runner recovers, and records what the report needs (typed
// failures, parts not exercised, why it did not run) on its Spec.
//
// A Tree holds everything one run registers; two runs share nothing.
package spec

import (
	"context"
	"time"
)

// Opts are the decorations of a container, a spec or a BeforeAll.
type Opts struct {
	// Labels select the node and everything in it (label filters).
	Labels []string
	// Ordered runs a container's specs in order; a failure skips the rest
	// unless ContinueOnFailure. The runner runs every container in order;
	// Ordered matters to a failure and to Ginkgo (Register).
	Ordered bool
	// ContinueOnFailure lets an ordered container go on after a failed spec.
	ContinueOnFailure bool
	// Timeout bounds a spec or a BeforeAll; 0 means no bound.
	Timeout time.Duration
}

// Container is a node of the tree that holds specs and containers.
type Container struct {
	Text string
	Opts
	// Items are the container's children in order: *Container or *Leaf.
	Items     []any
	BeforeAll []*Hook
	AfterAll  []func()
	parent    *Container
}

// Hook is a BeforeAll: its body and its timeout.
type Hook struct {
	Opts
	Body func(ctx context.Context)
}

// Leaf is one spec: its text, decorations and body.
type Leaf struct {
	Text string
	Opts
	Body func(ctx context.Context)
}

// Tree is the tree of one run, built by Describe, It, BeforeAll and
// AfterAll from its root down.
type Tree struct {
	Root *Container
	cur  *Container
}

// NewTree returns an empty tree.
func NewTree() *Tree {
	r := &Container{}
	return &Tree{Root: r, cur: r}
}

// Describe adds a container under the current one and calls body to fill it.
func (t *Tree) Describe(text string, o Opts, body func()) {
	c := &Container{Text: text, Opts: o, parent: t.cur}
	t.cur.Items = append(t.cur.Items, c)
	prev := t.cur
	t.cur = c
	defer func() { t.cur = prev }()
	body()
}

// It adds a spec to the current container.
func (t *Tree) It(text string, o Opts, body func(ctx context.Context)) {
	t.cur.Items = append(t.cur.Items, &Leaf{Text: text, Opts: o, Body: body})
}

// BeforeAll adds a body that runs once before the first selected spec of
// the current container. When it fails, the container's specs are not run.
func (t *Tree) BeforeAll(o Opts, body func(ctx context.Context)) {
	t.cur.BeforeAll = append(t.cur.BeforeAll, &Hook{Opts: o, Body: body})
}

// AfterAll adds a body that runs once after the container's last selected
// spec, when its BeforeAll ran.
func (t *Tree) AfterAll(body func()) {
	t.cur.AfterAll = append(t.cur.AfterAll, body)
}

// Nested reports whether the current container sits inside an ordered
// one below the root: only the outermost ordered container carries
// ContinueOnFailure in Ginkgo.
func (t *Tree) Nested() bool {
	for c := t.cur; c != nil && c != t.Root; c = c.parent {
		if c.Ordered {
			return true
		}
	}
	return false
}
