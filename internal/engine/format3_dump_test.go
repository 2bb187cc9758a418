package engine_test

// The dump of the format 3 fixture's golden.json (testdata/format3/generate.go, where it is
// the function of the same name), ported to this build's engine API: it must print the same
// bytes from the upgraded data as the build that wrote the fixture printed from it.

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/partita-db/partita/internal/engine"
	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/query"
	"github.com/partita-db/partita/internal/value"
)

type M = map[string]any

// queries are the queries run over each container, as the gateway prepares and runs them
// (query.Prepare, then Container.Query page by page over the whole EPK space).
var queries = map[string][]string{
	"orders": {
		"SELECT c.id, c.customer, c.total FROM c WHERE c.total > 300 AND c.status != 'cancelled'",
		"SELECT c.id, c.total FROM c ORDER BY c.total DESC",
		"SELECT VALUE COUNT(1) FROM c",
		"SELECT c.id, udf.tax(c.total) AS tax FROM c WHERE c.customer = 'c-07'",
	},
	"events": {
		"SELECT c.id, c.user, c.kind FROM c WHERE c.tenant = 't1' AND c.payload.ok = true",
		"SELECT c.id, c.n FROM c ORDER BY c.n",
		"SELECT VALUE COUNT(1) FROM c",
	},
	"reindexing": {
		"SELECT c.id, c.score FROM c WHERE c.score >= 50 ORDER BY c.score",
		"SELECT VALUE COUNT(1) FROM c",
		"SELECT c.id FROM c ORDER BY c.name",
	},
}

var defaultQueries = []string{
	"SELECT c.id, c._ts FROM c WHERE IS_DEFINED(c.id) ORDER BY c.id",
	"SELECT VALUE COUNT(1) FROM c",
}

// dump reads everything the engine serves of the account; now is the time queries run at.
func dump(e *engine.Engine, now func() time.Time) ([]byte, error) {
	out := M{"catalogVersion": e.CatalogVersion()}
	dbs := []any{}
	for _, d := range e.Databases() {
		dm := M{"resource": resourceJSON(d.Resource), "throughput": throughputJSON(d.Throughput), "meta": rawJSON(d.Meta)}
		infos, err := e.Containers(d.ID)
		if err != nil {
			return nil, err
		}
		cs := []any{}
		for _, info := range infos {
			cm, err := dumpContainer(e, d.ID, info, now)
			if err != nil {
				return nil, fmt.Errorf("container %s/%s: %w", d.ID, info.ID, err)
			}
			cs = append(cs, cm)
		}
		dm["containers"] = cs
		users, err := e.Users(d.ID)
		if err != nil {
			return nil, err
		}
		us := []any{}
		for _, u := range users {
			perms, err := e.Permissions(d.ID, u.ID)
			if err != nil {
				return nil, err
			}
			ps := []any{}
			for _, p := range perms {
				ps = append(ps, M{"resource": resourceJSON(p.Resource), "mode": string(p.Mode), "link": p.Link,
					"partitionKey": keyJSON(p.PartitionKey),
					"grant": M{"permission": p.Grant.Permission.String(), "container": p.Grant.Container.String(),
						"mode": string(p.Grant.Mode), "partitionKey": keyJSON(p.Grant.PartitionKey)}})
			}
			us = append(us, M{"resource": resourceJSON(u.Resource), "permissions": ps})
		}
		dm["users"] = us
		dbs = append(dbs, dm)
	}
	out["databases"] = dbs
	offers := []any{}
	for _, o := range e.Offers() {
		offers = append(offers, M{"id": o.ID, "resourceRid": o.ResourceRID, "resourceSelf": o.ResourceSelf,
			"throughput": throughputJSON(&o.Throughput), "etag": o.ETag(), "ts": o.TS})
	}
	out["offers"] = offers
	b, err := json.MarshalIndent(out, "", " ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

func resourceJSON(r engine.Resource) M {
	return M{"id": r.ID, "rid": r.RID, "self": r.Self, "etag": r.ETag, "ts": r.TS}
}

func throughputJSON(t *engine.Throughput) any {
	if t == nil {
		return nil
	}
	return M{"manual": t.Manual, "autoscaleMax": t.AutoscaleMax}
}

// rawJSON keeps a JSON value as the engine gave it, as a string; nil for none.
func rawJSON(b []byte) any {
	if b == nil {
		return nil
	}
	return string(b)
}

func keyJSON(k epk.Key) any {
	if k == nil {
		return nil
	}
	out := make([]any, len(k))
	for i, v := range k {
		out[i] = M{"kind": v.Kind.String(), "num": v.Num, "str": v.Str}
	}
	return out
}

func dumpContainer(e *engine.Engine, dbID string, info engine.ContainerInfo, now func() time.Time) (M, error) {
	cm := M{
		"resource":        resourceJSON(info.Resource),
		"partitionKey":    M{"paths": info.PartitionKey.Paths, "kind": info.PartitionKey.Kind, "version": info.PartitionKey.Version},
		"throughput":      throughputJSON(info.Throughput),
		"indexingPolicy":  rawJSON(info.Indexing),
		"rangeGeneration": info.RangeGeneration,
		"defaultTtl":      info.DefaultTTL,
		"uniqueKeys":      rawJSON(info.UniqueKeys),
		"indexProgress":   info.IndexProgress,
		"meta":            rawJSON(info.Meta),
	}
	parts := []any{}
	for _, p := range info.Partitions {
		parents := []uint32{}
		parents = append(parents, p.Parents...)
		parts = append(parts, M{"id": p.ID, "min": p.Range.Min.Hex(), "max": p.Range.Max.Hex(), "parents": parents,
			"lsn": p.LSN, "items": p.Items, "bytes": p.Bytes})
	}
	cm["partitions"] = parts

	if info.PartitionKey.Kind == engine.TableKind {
		t, err := e.Table(dbID, info.ID)
		if err != nil {
			return nil, err
		}
		rows := []any{}
		_, err = t.ScanRows(engine.RowPos{}, engine.RowEnd, false, func(k epk.EPK, id string, doc []byte) bool {
			rows = append(rows, M{"epk": k.Hex(), "id": hex.EncodeToString([]byte(id)), "doc": string(doc)})
			return true
		})
		if err != nil {
			return nil, err
		}
		cm["rows"] = rows
		return cm, nil
	}

	c, err := e.Container(dbID, info.ID)
	if err != nil {
		return nil, err
	}
	cm["scripts"] = dumpScripts(c)

	// The read feed, page by page over the whole range.
	items := []any{}
	var docs [][]byte
	pages := 0
	for token := ""; ; {
		page, err := c.ReadFeed(epk.All, token, 37)
		if err != nil {
			return nil, fmt.Errorf("read feed: %w", err)
		}
		pages++
		for _, d := range page.Docs {
			items = append(items, string(d))
			docs = append(docs, d)
		}
		if page.Next == "" {
			break
		}
		token = page.Next
	}
	cm["readFeed"] = M{"pageSize": 37, "pages": pages, "items": items}

	// A point read of every item.
	reads := []any{}
	for _, d := range docs {
		id, key, err := idAndKey(d, info.PartitionKey.Paths)
		if err != nil {
			return nil, err
		}
		res, err := c.ReadItem(key, id)
		r := M{"id": id, "partitionKey": keyJSON(key)}
		if err != nil {
			r["error"] = err.Error()
		} else {
			r["etag"], r["json"] = res.ETag, string(res.Doc)
		}
		reads = append(reads, r)
	}
	cm["pointReads"] = reads

	// The change feed of every partition key range, latest versions from the beginning, and
	// all versions and deletes after LSN 0.
	latest, all := []any{}, []any{}
	for _, p := range info.Partitions {
		l, err := feed(c, p, engine.FeedStart{}, false)
		if err != nil {
			return nil, err
		}
		latest = append(latest, l)
		a, err := feed(c, p, engine.FeedStart{HasAfter: true, After: 0}, true)
		if err != nil {
			return nil, err
		}
		all = append(all, a)
	}
	cm["changeFeedLatest"] = latest
	cm["changeFeedAllVersions"] = all

	qs := queries[info.ID]
	if qs == nil {
		qs = defaultQueries
	}
	qout := []any{}
	for _, text := range qs {
		qout = append(qout, runQuery(c, text, now()))
	}
	cm["queries"] = qout
	return cm, nil
}

func dumpScripts(c *engine.Container) M {
	out := M{}
	for _, k := range []engine.ScriptKind{engine.ProcedureScript, engine.TriggerScript, engine.FunctionScript} {
		list := []any{}
		for _, s := range c.Scripts(k) {
			list = append(list, M{"id": s.ID, "body": s.Body, "triggerType": s.TriggerType, "triggerOperation": s.TriggerOperation,
				"rid": s.RID, "self": s.Self, "etag": s.ETag, "ts": s.TS})
		}
		out[k.String()] = list
	}
	return out
}

// feed reads the change feed of one partition key range to its end, page by page.
func feed(c *engine.Container, p engine.PartitionInfo, start engine.FeedStart, allVersions bool) (M, error) {
	out := M{"partition": p.ID}
	changes := []any{}
	pages := 0
	for {
		page, err := c.ChangeFeed(engine.FeedQuery{Range: p.Range, Start: start, AllVersions: allVersions, Max: 25})
		if err != nil {
			out["error"] = err.Error()
			break
		}
		pages++
		for _, ch := range page.Changes {
			changes = append(changes, M{"lsn": ch.LSN, "op": ch.Op.String(), "ts": ch.TS, "id": ch.ID, "json": rawJSON(ch.JSON),
				"prevLsn": ch.PrevLSN, "prev": rawJSON(ch.Prev), "key": keyJSON(ch.Key), "expired": ch.Expired})
		}
		out["through"] = page.Through
		if len(page.Changes) == 0 {
			break
		}
		start = engine.FeedStart{HasAfter: true, After: page.Through}
	}
	out["pages"] = pages
	out["changes"] = changes
	return out, nil
}

// runQuery runs a query as the gateway does, page by page, and records its results or error.
func runQuery(c *engine.Container, text string, now time.Time) M {
	out := M{"query": text}
	p, err := query.Prepare(text)
	if err != nil {
		out["error"] = err.Error()
		return out
	}
	results := []any{}
	pages := 0
	for cont := ""; ; {
		res, err := c.Query(p, epk.All, query.Options{MaxItems: 40, Continuation: cont, Now: now})
		if err != nil {
			out["error"] = err.Error()
			break
		}
		pages++
		for _, v := range res.Results {
			results = append(results, string(value.AppendJSON(nil, v)))
		}
		if res.Next == "" {
			break
		}
		cont = res.Next
	}
	out["pages"] = pages
	out["results"] = results
	return out
}

// idAndKey reads an item's id and its partition key values at paths ("/a/b"): strings,
// numbers, booleans and null as they are, anything else or nothing as undefined.
func idAndKey(doc []byte, paths []string) (string, epk.Key, error) {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var v map[string]any
	if err := dec.Decode(&v); err != nil {
		return "", nil, err
	}
	id, ok := v["id"].(string)
	if !ok {
		return "", nil, errors.New("an item without a string id")
	}
	key := make(epk.Key, len(paths))
	for i, path := range paths {
		var cur any = v
		for _, seg := range strings.Split(strings.TrimPrefix(path, "/"), "/") {
			m, ok := cur.(map[string]any)
			if !ok {
				cur = undefined{}
				break
			}
			if cur, ok = m[seg]; !ok {
				cur = undefined{}
				break
			}
		}
		switch x := cur.(type) {
		case string:
			key[i] = epk.String(x)
		case json.Number:
			f, err := x.Float64()
			if err != nil {
				return "", nil, err
			}
			key[i] = epk.Number(f)
		case bool:
			key[i] = epk.Bool(x)
		case nil:
			key[i] = epk.Null()
		default:
			key[i] = epk.Undefined()
		}
	}
	return id, key, nil
}

type undefined struct{}
