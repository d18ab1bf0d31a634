package reference

import (
	"hash/maphash"
	"sync"
)

// shardCount is how many independent locks a shardedMap spreads its keys
// over; two keys share a lock with probability 1/shardCount.
const shardCount = 64

// shardedMap is a concurrent map split over shardCount shards, each with
// its own lock held only for one map operation (never across a commit, a
// failpoint or any wait), so it is no realm-wide lock: commits on
// different keys rarely meet, and never wait for each other for longer
// than a map operation. Unlike sync.Map it stores keys unboxed, so a
// lookup allocates nothing and the garbage collector scans few objects.
type shardedMap[K comparable, V any] struct {
	seed   maphash.Seed
	hash   func(maphash.Seed, K) uint64
	shards [shardCount]shard[K, V]
}

type shard[K comparable, V any] struct {
	mu sync.RWMutex
	m  map[K]V
	_  [64]byte // keeps neighbouring shards' locks off one cache line
}

func newShardedMap[K comparable, V any](hash func(maphash.Seed, K) uint64) *shardedMap[K, V] {
	m := &shardedMap[K, V]{seed: maphash.MakeSeed(), hash: hash}
	for i := range m.shards {
		m.shards[i].m = map[K]V{}
	}
	return m
}

func (m *shardedMap[K, V]) shardOf(k K) *shard[K, V] {
	return &m.shards[m.hash(m.seed, k)%shardCount]
}

// load returns the value stored under k.
func (m *shardedMap[K, V]) load(k K) (V, bool) {
	s := m.shardOf(k)
	s.mu.RLock()
	v, ok := s.m[k]
	s.mu.RUnlock()
	return v, ok
}

// loadOrStore returns the value stored under k, storing make() first when
// there is none.
func (m *shardedMap[K, V]) loadOrStore(k K, make func() V) V {
	s := m.shardOf(k)
	s.mu.Lock()
	defer s.mu.Unlock()
	if v, ok := s.m[k]; ok {
		return v
	}
	v := make()
	s.m[k] = v
	return v
}
