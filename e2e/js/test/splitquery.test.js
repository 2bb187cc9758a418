// A query the SDK plans itself (forceQueryPlan) runs range by range: one request per partition
// key range, naming it in x-ms-documentdb-partitionkeyrangeid. When a range has split, Partita
// answers 410/1002 (PartitionKeyRangeGone) for it, as the service does; the SDK is meant to
// re-read the ranges (GET .../pkranges), find the gone range's children and read on from them
// with the parent's continuation.
//
// @azure/cosmos 4.10.1 never gets there (docs/compatibility.md, Known SDK issues):
// DocumentProducer.bufferMore catches the 410/1002 and buffers it as a result, so the repair in
// ParallelQueryExecutionContextBase.bufferDocumentProducer, which runs only when bufferMore
// throws it, is unreachable. The producer is requeued and asks for the parent range again: empty
// pages for ever after a real split, a busy loop after a one-off 410. These tests therefore let
// the buffered 410/1002 through to the SDK's own repair (splitsReachRepair below, nothing more)
// and check Partita's side of it: the 410 itself, the ranges feed the SDK re-reads (children,
// parents, bounds) and the parent's continuation honoured on each child.

import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import { rawRequest, suite } from "../lib/harness.js";
// Not exported by the package: reached by path, for the one method splitsReachRepair wraps.
import { DocumentProducer } from "../node_modules/@azure/cosmos/dist/esm/queryExecutionContext/documentProducer.js";

const ITEMS = 120;
// A bound on pages, so that an iterator that never ends fails the test instead of hanging it.
const MAX_PAGES = 100;

/**
 * Makes DocumentProducer.bufferMore throw the 410/1002 it has just buffered instead of
 * returning, which is what the parallel execution context's repair expects; returns the undo.
 * Counts the 410s it let through in gone.count.
 */
function splitsReachRepair(gone) {
  const original = DocumentProducer.prototype.bufferMore;
  DocumentProducer.prototype.bufferMore = async function (diagnosticNode) {
    const before = this.fetchResults.length;
    const headers = await original.call(this, diagnosticNode);
    const last = this.fetchResults.at(-1);
    if (this.fetchResults.length > before && last.error?.code === 410 && last.error.substatus === 1002) {
      this.fetchResults.pop();
      gone.count++;
      throw last.error;
    }
    return headers;
  };
  return () => {
    DocumentProducer.prototype.bufferMore = original;
  };
}

function manage(server, method, body) {
  return rawRequest(server, { method, path: "/_partita/faults", body, sign: { type: "faults", link: "" } });
}

async function splitRange(server, db, coll, id) {
  const res = await rawRequest(server, { method: "POST", path: `/dbs/${db}/colls/${coll}/partitions/${id}/split` });
  assert.equal(res.status, 200, `split ${id}: ${JSON.stringify(res.body)}`);
}

async function liveRanges(server, db, coll) {
  const res = await rawRequest(server, { method: "GET", path: `/dbs/${db}/colls/${coll}/pkranges` });
  assert.equal(res.status, 200);
  return res.body.PartitionKeyRanges;
}

async function splitOldest(server) {
  const ranges = await liveRanges(server, "db", "c");
  const oldest = ranges.map((r) => Number(r.id)).sort((a, b) => a - b)[0];
  await splitRange(server, "db", "c", oldest);
}

/** Reads the query page by page, awaiting between(page) after each; returns the items in order. */
async function drain(iterator, between) {
  const items = [];
  let pages = 0;
  while (iterator.hasMoreResults()) {
    assert.ok(pages < MAX_PAGES, `no end after ${pages} pages (${items.length} items)`);
    const { resources } = await iterator.fetchNext();
    pages++;
    items.push(...(resources ?? []));
    await between(pages);
  }
  return items;
}

function assertEachOnce(items, what) {
  const seen = new Map();
  for (const { id } of items) seen.set(id, (seen.get(id) ?? 0) + 1);
  assert.equal(seen.size, ITEMS, `${what}: ${seen.size} distinct items`);
  for (const [id, n] of seen) assert.equal(n, 1, `${what}: ${id} returned ${n} times`);
}

suite(
  "a query planned by the SDK across splits",
  (ctx) => {
    let container;
    const gone = { count: 0 };
    let undo;

    before(async () => {
      const { database } = await ctx.client.databases.create({ id: "db" });
      ({ container } = await database.containers.create({ id: "c", partitionKey: { paths: ["/pk"] } }));
      for (let i = 0; i < ITEMS; i++) await container.items.create({ id: `i${i}`, pk: `k${i}`, n: i });
      assert.equal((await liveRanges(ctx.server, "db", "c")).length, 4, "--min-partitions 4");
      undo = splitsReachRepair(gone);
    });
    after(() => undo?.());

    test("every item once, with splits between pages", async () => {
      const start = gone.count;
      const iterator = container.items.query("SELECT * FROM c", { maxItemCount: 10, forceQueryPlan: true });
      const items = await drain(iterator, async (page) => {
        if (page <= 2) await splitOldest(ctx.server);
      });
      assertEachOnce(items, "plain");
      assert.ok(gone.count > start, "no range was gone: the splits did not hit the iterator");
    });

    test("an injected 410/1002 on one range request: the query completes", async () => {
      const res = await manage(ctx.server, "POST", { database: "db", container: "c", operations: ["query"], status: 410, substatus: 1002, count: 1 });
      assert.equal(res.status, 201, JSON.stringify(res.body));
      try {
        const start = gone.count;
        const items = await drain(container.items.query("SELECT * FROM c", { maxItemCount: 10, forceQueryPlan: true }), async () => {});
        assertEachOnce(items, "after an injected 410");
        assert.equal(gone.count, start + 1);
      } finally {
        assert.equal((await manage(ctx.server, "DELETE")).status, 200);
      }
    });

    test("ORDER BY, in order, with a split between pages", async () => {
      const iterator = container.items.query("SELECT * FROM c ORDER BY c.n", { maxItemCount: 10, forceQueryPlan: true });
      const items = await drain(iterator, async (page) => {
        if (page === 1) await splitOldest(ctx.server);
      });
      assertEachOnce(items, "ORDER BY");
      const ns = items.map((r) => r.n);
      assert.deepEqual(ns, [...ns].sort((a, b) => a - b), "ORDER BY across the split");
    });
  },
  { serverArgs: ["--min-partitions", "4", "--rate-limit=false"] },
);
