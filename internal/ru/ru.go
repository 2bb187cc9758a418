// Package ru is Partita's cost model: the request units every operation is charged. It is the
// one place where costs are decided, so that charges are deterministic and consistent, and it
// is explained for users in docs/request-units.md. Keep the two in step.
//
// The model is anchored on the published figures of Azure Cosmos DB: a 1 KB point read costs
// 1 RU and a 100 KB one 10 RU; a 1 KB indexed insert costs about 5.5 RU, a replace about twice
// an insert. Writes pay for the index entries they write, so the indexing policy matters. It must never depend on timing or load, only on the work a request asks for.
//
// It also keeps the budgets that charges are spent from (budget.go), and the arithmetic by
// which a partition's replicas in a cluster divide one budget between them (share.go).
package ru

import (
	"math"
	"time"
)

// sizeFactor grows a 1 KB cost to larger items: 1 up to 1 KB, then linearly so that 100 KB
// costs 10 times as much as 1 KB (the published read figures).
func sizeFactor(bytes int) float64 {
	kb := float64(bytes) / 1024
	if kb <= 1 {
		return 1
	}
	return 1 + (kb-1)*9/99
}

// round keeps charges to two decimals, as Cosmos reports them.
func round(x float64) float64 { return math.Round(x*100) / 100 }

// Base costs of a 1 KB item.
const (
	// scriptPerMillisecond prices a script's execution time: 10 ms of JavaScript cost about
	// as much as a 1 KB point read.
	scriptPerMillisecond = 0.1

	readBase = 1.0
	// writeBase is what writing a 1 KB item costs before its index: storing it, logging it,
	// syncing it. A replace writes a new version and retires the old one: twice as much.
	writeBase   = 4.4
	replaceBase = 2 * writeBase
	// termCost is the cost of one index entry a write adds or removes. A 1 KB item of 22
	// indexed values (a typical one under the default policy, which indexes every path)
	// costs 4.4 + 22 x 0.05 = 5.5 RU to create, the published figure; a lean indexing
	// policy makes writes cheaper, as in Cosmos.
	termCost    = 0.05
	missBase    = 1.0 // a point operation that found nothing or failed a precondition
	catalogBase = 1.0 // reading or listing databases, containers, ranges
	metaWrite   = 5.0 // creating, replacing or deleting a database or container
	// throttledBase is what a request refused with 429 reports.
	throttledBase = 0.38
)

// PointRead is the charge of reading one item of the given size.
func PointRead(bytes int) float64 { return round(readBase * sizeFactor(bytes)) }

// Insert is the charge of creating an item (and of an upsert that creates) that wrote terms
// index entries.
func Insert(bytes, terms int) float64 {
	return round(writeBase*sizeFactor(bytes) + termCost*float64(terms))
}

// Replace is the charge of replacing an item (and of an upsert that replaces), sized by the
// larger of the old and new versions, plus the index entries it removed and added (only the
// values that changed). A replace that changes every value of a 1 KB item of 22 terms costs
// twice its insert, 11 RU.
func Replace(oldBytes, newBytes, terms int) float64 {
	return round(replaceBase*sizeFactor(max(oldBytes, newBytes)) + termCost*float64(terms))
}

// Delete is the charge of deleting an item, which removes terms index entries.
func Delete(bytes, terms int) float64 {
	return round(writeBase*sizeFactor(bytes) + termCost*float64(terms))
}

// Miss is the charge of a point operation that did no work: not found, conflict, precondition
// failed.
func Miss() float64 { return missBase }

// Throttled is the charge reported on a request refused with 429: the service reports a small
// charge for the work of refusing it (0.38 RU per attempt is what its diagnostics show). It is
// reported only, never taken from the budget the request was refused by.
func Throttled() float64 { return throttledBase }

// Catalog is the charge of reading catalog resources (databases, containers, ranges, offers).
func Catalog() float64 { return catalogBase }

// CatalogWrite is the charge of creating, replacing or deleting a catalog resource.
func CatalogWrite() float64 { return metaWrite }

// Feed is the charge of a page of a read feed or scan: what a point read of the same bytes
// would cost, plus the per-partition overhead of a cross-partition request.
func Feed(items, bytes, partitions int) float64 {
	c := 1.0 + float64(bytes)/1024*0.3 + float64(items)*0.01
	if partitions > 1 {
		c += 2.5 * float64(partitions)
	}
	return round(c)
}

// Query is the charge of a query page: a base, the items it loaded (by size), the results it
// returned, and 2.5 RU for every physical partition it had to touch beyond the first.
func Query(items, bytes, results, partitions int) float64 {
	c := 2.0 + float64(bytes)/1024*0.4 + float64(items)*0.05 + float64(results)*0.01
	if partitions > 1 {
		c += 2.5 * float64(partitions-1)
	}
	return round(c)
}

// Script is what running server-side JavaScript costs beyond the operations it makes: its
// time, at scriptPerMillisecond, and at least the minimum charge of a request.
func Script(d time.Duration) float64 {
	return round(max(missBase, float64(d.Microseconds())/1000*scriptPerMillisecond))
}
