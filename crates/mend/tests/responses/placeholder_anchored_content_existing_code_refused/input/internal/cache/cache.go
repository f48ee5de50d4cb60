package cache

import (
	"sync"
	"time"
)

// Entry is one cached value and when it stops being fresh.
type Entry[V any] struct {
	Value   V
	Expires time.Time
}

// Cache is a size-bounded TTL cache safe for concurrent use.
type Cache[K comparable, V any] struct {
	mu      sync.Mutex
	items   map[K]Entry[V]
	order   []K
	ttl     time.Duration
	maxSize int
	now     func() time.Time
}

// New returns a cache holding at most maxSize entries for ttl each.
func New[K comparable, V any](ttl time.Duration, maxSize int) *Cache[K, V] {
	return &Cache[K, V]{
		items:   make(map[K]Entry[V], maxSize),
		ttl:     ttl,
		maxSize: maxSize,
		now:     time.Now,
	}
}

// Get returns the value for key if it is present and fresh.
func (c *Cache[K, V]) Get(key K) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.items[key]
	if !ok || c.now().After(e.Expires) {
		var zero V
		return zero, false
	}
	return e.Value, true
}

// Set stores value under key, evicting the oldest entry when full.
func (c *Cache[K, V]) Set(key K, value V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, exists := c.items[key]; !exists {
		c.order = append(c.order, key)
	}
	c.items[key] = Entry[V]{Value: value, Expires: c.now().Add(c.ttl)}
	for len(c.order) > c.maxSize {
		oldest := c.order[0]
		c.order = c.order[1:]
		delete(c.items, oldest)
	}
}

// Purge drops every expired entry and returns how many it dropped.
func (c *Cache[K, V]) Purge() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	kept := c.order[:0]
	dropped := 0
	for _, k := range c.order {
		if now.After(c.items[k].Expires) {
			delete(c.items, k)
			dropped++
			continue
		}
		kept = append(kept, k)
	}
	c.order = kept
	return dropped
}

// Len reports how many entries the cache holds, fresh or not.
func (c *Cache[K, V]) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.items)
}
