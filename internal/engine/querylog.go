package engine

import (
	"container/list"
	"sync"
)

// QueryCount is a query text a container ran and how many times, for the partition key
// advisor's fan-out share.
type QueryCount struct {
	Text  string
	Count int64
}

// Bounds of a container's query log: it keeps the most recently run distinct texts, and
// ignores texts too long to be worth keeping (a query may be 512 KB).
const (
	queryLogSize   = 256
	maxLoggedQuery = 4096
)

// queryLog is a small LRU of query texts with counts. Recording is a map lookup and a list
// move under a mutex: cheap next to parsing the query it follows.
type queryLog struct {
	mu      sync.Mutex
	entries map[string]*list.Element // text -> element holding *QueryCount
	order   list.List                // most recently run first; len(entries) == order.Len() <= queryLogSize
}

// RecordQuery notes that the container ran text (once per query, not per page).
func (c *Container) RecordQuery(text string) {
	if len(text) > maxLoggedQuery {
		return
	}
	l := &c.queries
	l.mu.Lock()
	defer l.mu.Unlock()
	if el, ok := l.entries[text]; ok {
		el.Value.(*QueryCount).Count++
		l.order.MoveToFront(el)
		return
	}
	if l.entries == nil {
		l.entries = map[string]*list.Element{}
	}
	if l.order.Len() >= queryLogSize {
		last := l.order.Back()
		delete(l.entries, last.Value.(*QueryCount).Text)
		l.order.Remove(last)
	}
	l.entries[text] = l.order.PushFront(&QueryCount{Text: text, Count: 1})
}

// RecentQueries returns the logged texts, most recently run first. The log lives in memory
// only: it starts empty when the server starts.
func (c *Container) RecentQueries() []QueryCount {
	l := &c.queries
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]QueryCount, 0, l.order.Len())
	for el := l.order.Front(); el != nil; el = el.Next() {
		out = append(out, *el.Value.(*QueryCount))
	}
	return out
}
