// Fault injection and splits on demand (Partita's management API) against @azure/cosmos: what
// the SDK does with each injected answer, which is what it does with the service's
// (docs/testing-your-app.md says it): 429s retried after the retry-after, 410/1002 on the change
// feed answered by re-reading the partition key ranges, a 410 on a whole query turned into a
// retryable 503 for the application, reads retried once after a 503, 449 and 408 left to the
// application; and a paginated cross-partition query that completes, every item once, while
// its partitions split between pages.

import assert from "node:assert/strict";
import { before, test } from "node:test";

import { ChangeFeedStartFrom } from "@azure/cosmos";

import { expectStatus, rawRequest, suite } from "../lib/harness.js";

const ITEMS = 120;

/** A management API request, signed as the API documents (type "faults"). */
function manage(server, method, id, body) {
  return rawRequest(server, {
    method,
    path: id ? `/_partita/faults/${id}` : "/_partita/faults",
    body,
    sign: { type: "faults", link: id ? `faults/${id}` : "" },
  });
}

async function addRule(server, spec) {
  const res = await manage(server, "POST", undefined, spec);
  assert.equal(res.status, 201, `add rule ${JSON.stringify(spec)}: ${JSON.stringify(res.body)}`);
  return res.body.id;
}

async function rule(server, id) {
  const res = await manage(server, "GET", id);
  assert.equal(res.status, 200, `rule ${id}: ${JSON.stringify(res.body)}`);
  return res.body;
}

async function clearRules(server) {
  const res = await manage(server, "DELETE");
  assert.equal(res.status, 200);
}

async function splitRange(server, db, coll, id) {
  const res = await rawRequest(server, { method: "POST", path: `/dbs/${db}/colls/${coll}/partitions/${id}/split` });
  assert.equal(res.status, 200, `split ${id}: ${JSON.stringify(res.body)}`);
  return res.body;
}

async function liveRanges(server, db, coll) {
  const res = await rawRequest(server, { method: "GET", path: `/dbs/${db}/colls/${coll}/pkranges` });
  assert.equal(res.status, 200);
  return res.body.PartitionKeyRanges;
}

suite(
  "fault injection",
  (ctx) => {
    let container;
    const key = (i) => `k${i}`;

    before(async () => {
      const { database } = await ctx.client.databases.create({ id: "db" });
      ({ container } = await database.containers.create({ id: "c", partitionKey: { paths: ["/pk"] } }));
      for (let i = 0; i < ITEMS; i++) {
        await container.items.create({ id: `i${i}`, pk: key(i), n: i });
      }
      const ranges = await liveRanges(ctx.server, "db", "c");
      assert.equal(ranges.length, 4, "--min-partitions 4");
    });

    test("429: retried after the retry-after; a rule for the next N fires N times", async () => {
      const id = await addRule(ctx.server, { database: "db", container: "c", operations: ["read"], status: 429, retryAfterMs: 20, count: 3 });
      try {
        const { resource, headers } = await container.item("i1", key(1)).read();
        assert.equal(resource.n, 1);
        assert.equal(Number(headers["x-ms-throttle-retry-count"]), 3);
        for (let i = 0; i < 5; i++) await container.item(`i${i}`, key(i)).read();
        const r = await rule(ctx.server, id);
        assert.equal(r.hits, 3);
        assert.equal(r.remaining, 0);
      } finally {
        await clearRules(ctx.server);
      }
    });

    test("410/1002 on a query the gateway runs whole: the SDK asks the application to retry", async () => {
      // By default the SDK sends a cross-partition query to the gateway in one piece (Partita
      // runs it whole, as the service runs what it can); a 410 there is not retried.
      const id = await addRule(ctx.server, { database: "db", container: "c", operations: ["query"], status: 410, substatus: 1002, count: 2 });
      try {
        const all = await expectStatus(container.items.query("SELECT c.id FROM c").fetchAll(), 503);
        assert.match(all.message, /partition split.*retryable/);
        assert.equal(all.originalError.code, 410);
        const page = await expectStatus(container.items.query("SELECT c.id FROM c").fetchNext(), 410);
        assert.equal(page.substatus, 1002);
        assert.equal((await rule(ctx.server, id)).hits, 2);
        const { resources } = await container.items.query("SELECT c.id FROM c").fetchAll(); // the retry
        assert.equal(resources.length, ITEMS);
      } finally {
        await clearRules(ctx.server);
      }
    });

    test("410/1002 on the change feed: the SDK re-reads the ranges and reads on, every change once", async () => {
      const gone = await addRule(ctx.server, { database: "db", container: "c", operations: ["changefeed"], status: 410, substatus: 1002, count: 2 });
      const refresh = await addRule(ctx.server, { database: "db", container: "c", operations: ["pkranges"], latencyMs: 1 });
      try {
        const iterator = container.items.getChangeFeedIterator({ changeFeedStartFrom: ChangeFeedStartFrom.Beginning(), maxItemCount: 25 });
        const seen = new Map();
        for (let i = 0; i < 100; i++) {
          const page = await iterator.readNext();
          if (page.statusCode === 304) break;
          assert.equal(page.statusCode, 200);
          for (const r of page.result) seen.set(r.id, (seen.get(r.id) ?? 0) + 1);
        }
        assert.equal(seen.size, ITEMS);
        for (const [id, n] of seen) assert.equal(n, 1, `${id} read ${n} times`);
        assert.equal((await rule(ctx.server, gone)).hits, 2);
        // The first read of the ranges, then one after each 410.
        assert.ok((await rule(ctx.server, refresh)).hits >= 3, "the SDK did not read the ranges again");
      } finally {
        await clearRules(ctx.server);
      }
    });

    test("410/1002 on a point read reaches the application", async () => {
      await addRule(ctx.server, { database: "db", container: "c", operations: ["read"], status: 410, count: 1 });
      try {
        const err = await expectStatus(container.item("i2", key(2)).read(), 410);
        assert.equal(err.substatus, 1002);
        assert.match(err.message, /Injected by Partita's fault rule/);
        const { resource } = await container.item("i2", key(2)).read();
        assert.equal(resource.n, 2);
      } finally {
        await clearRules(ctx.server);
      }
    });

    test("449 reaches the application, and the write is not applied", async () => {
      await addRule(ctx.server, { database: "db", container: "c", operations: ["replace"], status: 449, count: 1 });
      try {
        await expectStatus(container.item("i3", key(3)).replace({ id: "i3", pk: key(3), n: -3 }), 449);
        assert.equal((await container.item("i3", key(3)).read()).resource.n, 3);
        await container.item("i3", key(3)).replace({ id: "i3", pk: key(3), n: 3 }); // the application's own retry
      } finally {
        await clearRules(ctx.server);
      }
    });

    test("503: a read is retried once; a write reaches the application unapplied", async () => {
      const read = await addRule(ctx.server, { database: "db", container: "c", operations: ["read"], status: 503, count: 1 });
      const write = await addRule(ctx.server, { database: "db", container: "c", operations: ["create"], status: 503, count: 1 });
      try {
        assert.equal((await container.item("i4", key(4)).read()).resource.n, 4);
        assert.equal((await rule(ctx.server, read)).hits, 1);
        await expectStatus(container.items.create({ id: "new503", pk: "x" }), 503);
        assert.equal((await rule(ctx.server, write)).hits, 1);
        assert.equal((await container.item("new503", "x").read()).statusCode, 404);
      } finally {
        await clearRules(ctx.server);
      }
    });

    test("408 reaches the application", async () => {
      await addRule(ctx.server, { database: "db", container: "c", operations: ["read"], status: 408, count: 1 });
      try {
        await expectStatus(container.item("i5", key(5)).read(), 408);
        assert.equal((await container.item("i5", key(5)).read()).resource.n, 5);
      } finally {
        await clearRules(ctx.server);
      }
    });

    test("a rule on one partition key range hits only the requests on that range", async () => {
      const ranges = await liveRanges(ctx.server, "db", "c");
      const target = ranges[1].id;
      const id = await addRule(ctx.server, { database: "db", container: "c", operations: ["read"], status: 408, partitionKeyRangeId: target });
      try {
        const failed = new Set();
        for (let i = 0; i < ITEMS; i++) {
          try {
            await container.item(`i${i}`, key(i)).read();
          } catch (err) {
            assert.equal(err.code, 408, `i${i}: ${err.message}`);
            failed.add(`i${i}`);
          }
        }
        // The range's own items, read with a query on that range alone (not a read: not hit).
        const res = await rawRequest(ctx.server, {
          method: "POST",
          path: "/dbs/db/colls/c/docs",
          headers: {
            "content-type": "application/query+json",
            "x-ms-documentdb-isquery": "true",
            "x-ms-documentdb-partitionkeyrangeid": target,
          },
          body: { query: "SELECT VALUE c.id FROM c" },
        });
        assert.equal(res.status, 200, JSON.stringify(res.body));
        const inRange = new Set(res.body.Documents);
        assert.ok(inRange.size > 0 && inRange.size < ITEMS, `range ${target} holds ${inRange.size} items`);
        assert.deepEqual([...failed].sort(), [...inRange].sort());
        assert.equal((await rule(ctx.server, id)).hits, inRange.size);
      } finally {
        await clearRules(ctx.server);
      }
    });
  },
  { serverArgs: ["--min-partitions", "4", "--rate-limit=false"] },
);

suite(
  "a paginated query across splits on demand",
  (ctx) => {
    test("every item exactly once, with splits between pages", async () => {
      const { database } = await ctx.client.databases.create({ id: "db" });
      const { container } = await database.containers.create({ id: "c", partitionKey: { paths: ["/pk"] } });
      for (let i = 0; i < ITEMS; i++) {
        await container.items.create({ id: `i${i}`, pk: `k${i}`, n: i });
      }
      // The SDK sends a cross-partition query to the gateway in one piece, as it does to the
      // service when the gateway can run it; the continuation carries it across the splits.
      const runs = [
        ["SELECT * FROM c", {}],
        ["SELECT * FROM c ORDER BY c.n", {}],
      ];
      for (const [sql, options] of runs) {
        const iterator = container.items.query(sql, { maxItemCount: 15, ...options });
        const seen = new Map();
        const order = [];
        let pages = 0;
        while (iterator.hasMoreResults()) {
          const { resources } = await iterator.fetchNext();
          pages++;
          for (const r of resources) {
            seen.set(r.id, (seen.get(r.id) ?? 0) + 1);
            order.push(r.n);
          }
          if (pages <= 3) {
            // Split the oldest live range (ids only grow): one the iterator is reading.
            const ranges = await liveRanges(ctx.server, "db", "c");
            const oldest = ranges.map((r) => Number(r.id)).sort((a, b) => a - b)[0];
            await splitRange(ctx.server, "db", "c", oldest);
          }
        }
        assert.equal(seen.size, ITEMS, `${sql} ${JSON.stringify(options)}: ${seen.size} distinct items in ${pages} pages`);
        for (const [id, n] of seen) assert.equal(n, 1, `${sql} ${JSON.stringify(options)}: ${id} returned ${n} times`);
        if (sql.includes("ORDER BY")) {
          assert.deepEqual(order, [...order].sort((a, b) => a - b), "ORDER BY across the splits");
        }
      }
      assert.equal((await liveRanges(ctx.server, "db", "c")).length, 10, "6 splits of 4 ranges");
    });
  },
  { serverArgs: ["--min-partitions", "4", "--rate-limit=false"] },
);
