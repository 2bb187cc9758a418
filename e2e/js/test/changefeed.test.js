// Change feed: items.getChangeFeedIterator in both modes (LatestVersion, AllVersionsAndDeletes),
// from every start (Beginning, Now, Time, Continuation), over every scope (the container, one
// partition key, a feed range, a hierarchical key prefix), paging, the 304 answer when nothing
// is new, continuations in new iterators, and reading on through a partition split.
//
// The SDK reads the feed one physical partition at a time: for a container or a feed range,
// readNext returns the next page of one partition that has changes, or 304 once no partition
// has any. drain() below reads until that 304, so it sees every change made so far.

import assert from "node:assert/strict";
import { before, test } from "node:test";

import { ChangeFeedMode, ChangeFeedStartFrom } from "@azure/cosmos";

import { rawRequest, suite, uniqueId } from "../lib/harness.js";

const MAX_PAGES = 500; // a feed that never runs dry fails instead of hanging

const sorted = (xs) => [...xs].sort();
const pad = (i) => String(i).padStart(2, "0");

/** A latest-version feed item (or any item) as "id@v". */
const lv = (item) => `${item.id}@${item.v}`;

/** An all-versions feed record as "operationType id@v" (for a delete, the version deleted). */
function av(record) {
  const op = record.metadata?.operationType;
  if (op === "delete") return `delete ${record.metadata.id}@${record.previous?.v}`;
  return `${op} ${record.current?.id}@${record.current?.v}`;
}

/**
 * Reads an iterator until the feed reports nothing new. Returns the pages that had changes
 * (checking each is a 200 with at most maxItemCount changes, when given), their changes in
 * order, and the final 304 response.
 */
async function drain(iterator, { maxItemCount } = {}) {
  const pages = [];
  for (let i = 0; i < MAX_PAGES; i++) {
    const page = await iterator.readNext();
    if (page.statusCode === 304) {
      assertNotModified(page, iterator);
      return { pages, changes: pages.flatMap((p) => p.result), last: page };
    }
    assert.equal(page.statusCode, 200, `page ${i}: status ${page.statusCode}`);
    assert.ok(Array.isArray(page.result) && page.result.length > 0, `page ${i}: a 200 page without changes`);
    assert.equal(page.count, page.result.length);
    assert.ok(page.requestCharge > 0, `page ${i}: requestCharge ${page.requestCharge}`);
    assert.equal(typeof page.continuationToken, "string");
    if (maxItemCount !== undefined) {
      const n = page.result.length;
      assert.ok(n <= maxItemCount, `page ${i}: ${n} changes > maxItemCount ${maxItemCount}`);
    }
    pages.push(page);
  }
  throw new Error(`the change feed did not run dry within ${MAX_PAGES} pages`);
}

/** The answer when nothing is new: 304, no changes, a continuation, and more to come later. */
function assertNotModified(page, iterator) {
  assert.equal(page.statusCode, 304);
  assert.deepEqual(page.result, []);
  assert.equal(page.count, 0);
  assert.equal(typeof page.continuationToken, "string");
  assert.ok(page.continuationToken.length > 0);
  assert.equal(iterator.hasMoreResults, true, "the change feed never ends");
}

/** Asserts that a latest-version page's items carry _lsn, ascending (one partition per page). */
function assertLSNs(page) {
  let prev = 0;
  for (const item of page.result) {
    assert.ok(Number.isInteger(item._lsn) && item._lsn > 0, `_lsn of ${item.id}: ${item._lsn}`);
    assert.ok(item._lsn > prev, `_lsn ${item._lsn} of ${item.id} after ${prev}`);
    prev = item._lsn;
    for (const prop of ["_rid", "_self", "_etag"]) assert.equal(typeof item[prop], "string", `${prop} of ${item.id}`);
    assert.ok(Number.isInteger(item._ts));
  }
}

/** Asserts that a list has no repeats. */
function assertUnique(xs, what) {
  const seen = new Set();
  for (const x of xs) {
    assert.ok(!seen.has(x), `${what}: ${x} seen twice`);
    seen.add(x);
  }
}

/**
 * Writes items of partition key /pk, each {id, pk, v}, and records what it did, so that tests
 * can say which changes a feed should show: latest(mark) is the live items changed after mark
 * as "id@v", in the order of their last change; changes(mark) the writes after mark as
 * "operationType id@v", in order.
 */
function recorder(container) {
  const live = new Map(); // id -> { pk, v, seq }
  const log = []; // { op, id, pk, v, entry }
  const note = (op, id, pk, v) => {
    log.push({ op, id, pk, v, entry: `${op} ${id}@${v}` });
    if (op === "delete") live.delete(id);
    else live.set(id, { pk, v, seq: log.length });
  };
  return {
    live,
    /** The position after the writes so far. */
    mark: () => log.length,
    async create(id, pk, v = 1) {
      await container.items.create({ id, pk, v });
      note("create", id, pk, v);
    },
    async replace(id, v) {
      const { pk } = live.get(id);
      await container.item(id, pk).replace({ id, pk, v });
      note("replace", id, pk, v);
    },
    async upsert(id, pk, v) {
      const op = live.has(id) ? "replace" : "create";
      await container.items.upsert({ id, pk, v });
      note(op, id, pk, v);
    },
    async patch(id, v) {
      const { pk } = live.get(id);
      await container.item(id, pk).patch([{ op: "set", path: "/v", value: v }]);
      note("replace", id, pk, v);
    },
    async remove(id) {
      const { pk, v } = live.get(id);
      await container.item(id, pk).delete();
      note("delete", id, pk, v);
    },
    latest(mark = 0, filter = () => true) {
      return [...live]
        .filter(([, e]) => e.seq > mark && filter(e))
        .sort(([, a], [, b]) => a.seq - b.seq)
        .map(([id, e]) => `${id}@${e.v}`);
    },
    changes(mark = 0, filter = () => true) {
      return log
        .slice(mark)
        .filter(filter)
        .map((c) => c.entry);
    },
  };
}

/**
 * Waits, by writing to probe, until the server's clock has passed the second ts; returns the
 * first _ts the server wrote after it. Changes committed from then on have _ts >= it.
 */
async function nextServerSecond(probe, ts) {
  for (let i = 0; ; i++) {
    const { resource } = await probe.items.upsert({ id: "clock", pk: "clock", i });
    if (resource._ts > ts) return resource._ts;
    if (i > 100) throw new Error(`the server's _ts stayed at ${resource._ts}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

suite("change feed", (ctx) => {
  let database;
  let probe; // a container to read the server's clock through
  before(async () => {
    ({ database } = await ctx.client.databases.create({ id: uniqueId("db-changefeed") }));
    ({ container: probe } = await database.containers.create({ id: "probe", partitionKey: { paths: ["/pk"] } }));
  });

  /** A new container with partition key /pk and 4 physical partitions. */
  async function fourRanges() {
    const { container } = await database.containers.create({
      id: uniqueId("cf"),
      partitionKey: { paths: ["/pk"] },
      throughput: 20000, // 4 physical partitions
    });
    assert.equal((await container.getFeedRanges()).length, 4);
    return container;
  }

  // ---- latest version ---------------------------------------------------------------------------

  test("Beginning(): every live item once, at its last version, with _lsn, in pages of at most maxItemCount", async () => {
    const container = await fourRanges();
    const w = recorder(container);
    for (let i = 0; i < 24; i++) await w.create(`i${pad(i)}`, `k${i % 8}`);
    await w.replace("i00", 2);
    await w.replace("i05", 2);
    await w.replace("i00", 3); // replaced twice: only v3 shows
    await w.replace("i05", 3);
    await w.upsert("i07", "k7", 2);
    await w.upsert("new", "k3", 1);
    await w.patch("i09", 2);
    await w.remove("i10");
    await w.remove("i11");
    await w.create("gone", "k2");
    await w.remove("gone"); // created and deleted: never shows

    const iterator = container.items.getChangeFeedIterator({
      changeFeedStartFrom: ChangeFeedStartFrom.Beginning(),
      maxItemCount: 3,
    });
    const { pages, changes } = await drain(iterator, { maxItemCount: 3 });
    const seen = changes.map(lv);
    assertUnique(seen, "latest version");
    assert.deepEqual(sorted(seen), sorted(w.latest()));
    assert.equal(seen.length, 23);
    assert.ok(seen.includes("i00@3") && seen.includes("i05@3") && seen.includes("i09@2"));
    assert.ok(pages.some((p) => p.result.length === 3), "some page is full");
    assert.ok(pages.length >= 8, `${pages.length} pages for 23 items in pages of 3`);
    for (const page of pages) assertLSNs(page);

    // The items are the stored items, with _lsn added.
    const patched = changes.find((it) => it.id === "i09");
    const { resource: stored } = await container.item("i09", "k1").read();
    const { _lsn, ...rest } = patched;
    assert.deepEqual(rest, stored);
    assert.ok(Number.isInteger(_lsn));

    // Read dry: nothing new is 304 again and again.
    for (let i = 0; i < 3; i++) assertNotModified(await iterator.readNext(), iterator);
  });

  test("Now(): 304 until something changes, then exactly the new changes", async () => {
    const container = await fourRanges();
    const w = recorder(container);
    for (let i = 0; i < 8; i++) await w.create(`old${i}`, `k${i}`);

    const iterator = container.items.getChangeFeedIterator({
      changeFeedStartFrom: ChangeFeedStartFrom.Now(),
      maxItemCount: 10,
    });
    const first = await iterator.readNext(); // "now" is when the iterator first reads
    assertNotModified(first, iterator);
    assertNotModified(await iterator.readNext(), iterator);

    const mark = w.mark();
    await w.create("new1", "k1");
    await w.replace("old3", 2);
    await w.remove("old4");
    await w.create("new2", "k6");
    await w.replace("old3", 3);
    const { changes } = await drain(iterator, { maxItemCount: 10 });
    assert.deepEqual(sorted(changes.map(lv)), sorted(w.latest(mark)));
    assert.deepEqual(sorted(changes.map(lv)), ["new1@1", "new2@1", "old3@3"]);

    // The same iterator goes on with what changes next.
    const mark2 = w.mark();
    await w.replace("new1", 2);
    const next = await drain(iterator);
    assert.deepEqual(next.changes.map(lv), w.latest(mark2));
    assert.deepEqual(next.changes.map(lv), ["new1@2"]);
  });

  test("Time(date): the changes from that second on; Time(epoch) is the beginning; a future time sees nothing", async () => {
    const container = await fourRanges();
    const w = recorder(container);
    for (let i = 0; i < 6; i++) await w.create(`before${i}`, `k${i % 3}`);
    await w.replace("before1", 2);
    const { resource: last } = await container.item("before1", "k1").read();
    // The feed's time is the commit time in seconds: start at the first second after the
    // changes above.
    const start = await nextServerSecond(probe, last._ts);
    const mark = w.mark();
    for (let i = 0; i < 4; i++) await w.create(`after${i}`, `k${i % 3}`);
    await w.replace("before2", 2);
    await w.remove("before3");
    const { resources: all } = await container.items.readAll().fetchAll();
    for (const item of all) {
      const changedSince = item.id.startsWith("after") || item.id === "before2";
      assert.equal(item._ts >= start, changedSince, `${item.id} _ts ${item._ts}, start ${start}`);
    }

    const fromTime = (date, scope) =>
      container.items.getChangeFeedIterator({ changeFeedStartFrom: ChangeFeedStartFrom.Time(date, scope) });
    const since = await drain(fromTime(new Date(start * 1000)));
    assert.deepEqual(sorted(since.changes.map(lv)), sorted(w.latest(mark)));
    assert.equal(since.changes.length, 5);

    const epoch = await drain(fromTime(new Date(0)));
    assert.deepEqual(sorted(epoch.changes.map(lv)), sorted(w.latest()));

    const onePK = await drain(fromTime(new Date(start * 1000), "k2"));
    assert.deepEqual(onePK.changes.map(lv), w.latest(mark, (e) => e.pk === "k2"));
    assert.deepEqual(onePK.changes.map(lv), ["after2@1", "before2@2"]);

    const future = fromTime(new Date((start + 3600) * 1000));
    assertNotModified(await future.readNext(), future);
  });

  test("Continuation(token) in a new iterator resumes where the old one stopped, without repeats", async () => {
    const container = await fourRanges();
    const w = recorder(container);
    for (let i = 0; i < 20; i++) await w.create(`c${pad(i)}`, `k${i % 10}`);

    const first = container.items.getChangeFeedIterator({
      changeFeedStartFrom: ChangeFeedStartFrom.Beginning(),
      maxItemCount: 2,
    });
    const head = [];
    let token;
    for (let i = 0; i < 3; i++) {
      const page = await first.readNext();
      assert.equal(page.statusCode, 200);
      head.push(...page.result.map(lv));
      token = page.continuationToken;
    }
    assert.ok(head.length >= 3 && head.length <= 6, `${head.length} items in 3 pages of at most 2`);

    const second = container.items.getChangeFeedIterator({
      changeFeedStartFrom: ChangeFeedStartFrom.Continuation(token),
      maxItemCount: 2,
    });
    const rest = await drain(second, { maxItemCount: 2 });
    const tail = rest.changes.map(lv);
    assertUnique([...head, ...tail], "head and tail");
    assert.deepEqual(sorted([...head, ...tail]), sorted(w.latest()));

    // The token of the 304 holds the position too: a third iterator sees only what changes next.
    const mark = w.mark();
    await w.create("later", "k4");
    await w.replace("c03", 2);
    await w.remove("c04");
    const third = container.items.getChangeFeedIterator({
      changeFeedStartFrom: ChangeFeedStartFrom.Continuation(rest.last.continuationToken),
    });
    const later = await drain(third);
    assert.deepEqual(sorted(later.changes.map(lv)), sorted(w.latest(mark)));
    assert.deepEqual(sorted(later.changes.map(lv)), ["c03@2", "later@1"]);
  });

  test("a continuation from one container is refused on another, also on a new container of the same name", async () => {
    const a = await fourRanges();
    const b = await fourRanges();
    await a.items.create({ id: "x", pk: "p", v: 1 });
    const readToken = async (iterator) => (await drain(iterator)).last.continuationToken;
    const rangeToken = await readToken(
      a.items.getChangeFeedIterator({ changeFeedStartFrom: ChangeFeedStartFrom.Beginning() }),
    );
    const keyToken = await readToken(
      a.items.getChangeFeedIterator({ changeFeedStartFrom: ChangeFeedStartFrom.Beginning("p") }),
    );
    // The SDK compares the token's container _rid with the container's before it sends anything.
    for (const token of [rangeToken, keyToken]) {
      const other = b.items.getChangeFeedIterator({ changeFeedStartFrom: ChangeFeedStartFrom.Continuation(token) });
      await assert.rejects(other.readNext(), /not for the current container/);
      const same = a.items.getChangeFeedIterator({ changeFeedStartFrom: ChangeFeedStartFrom.Continuation(token) });
      assertNotModified(await same.readNext(), same);
    }

    // A container deleted and created again under the same id is another container.
    const id = a.id;
    await a.delete();
    const { container: again } = await database.containers.create({
      id,
      partitionKey: { paths: ["/pk"] },
      throughput: 20000,
    });
    for (const token of [rangeToken, keyToken]) {
      const other = again.items.getChangeFeedIterator({ changeFeedStartFrom: ChangeFeedStartFrom.Continuation(token) });
      await assert.rejects(other.readNext(), /not for the current container/);
    }
  });

  test("getAsyncIterator yields the same pages as readNext", async () => {
    const container = await fourRanges();
    const w = recorder(container);
    for (let i = 0; i < 9; i++) await w.create(`a${i}`, `k${i}`);
    const seen = [];
    const iterator = container.items.getChangeFeedIterator({
      changeFeedStartFrom: ChangeFeedStartFrom.Beginning(),
      maxItemCount: 4,
    });
    let pages = 0;
    for await (const page of iterator.getAsyncIterator()) {
      if (page.statusCode === 304) break;
      assert.ok(++pages < MAX_PAGES);
      assert.ok(page.result.length <= 4);
      seen.push(...page.result.map(lv));
    }
    assert.deepEqual(sorted(seen), sorted(w.latest()));
  });

  // ---- scopes -------------------------------------------------------------------------------------

  test("Beginning(pk): one partition key's changes, in the order made; its continuation too", async () => {
    const container = await fourRanges();
    const w = recorder(container);
    for (let i = 0; i < 12; i++) await w.create(`p${pad(i)}`, i % 2 ? "odd" : "even");
    await w.replace("p02", 2);
    await w.replace("p03", 2);
    await w.remove("p04");
    await w.replace("p00", 2);
    const even = (e) => e.pk === "even";

    const iterator = container.items.getChangeFeedIterator({
      changeFeedStartFrom: ChangeFeedStartFrom.Beginning("even"),
      maxItemCount: 2,
    });
    const { pages, changes, last } = await drain(iterator, { maxItemCount: 2 });
    assert.deepEqual(changes.map(lv), w.latest(0, even));
    assert.deepEqual(changes.map(lv), ["p06@1", "p08@1", "p10@1", "p02@2", "p00@2"]);
    assert.equal(pages.length, 3);
    for (const page of pages) assertLSNs(page);

    const mark = w.mark();
    await w.create("p12", "even");
    await w.create("p13", "odd");
    await w.replace("p06", 2);
    await w.replace("p07", 2);
    const resumed = container.items.getChangeFeedIterator({
      changeFeedStartFrom: ChangeFeedStartFrom.Continuation(last.continuationToken),
    });
    const later = await drain(resumed);
    assert.deepEqual(later.changes.map(lv), w.latest(mark, even));
    assert.deepEqual(later.changes.map(lv), ["p12@1", "p06@2"]);
    // The old iterator sees the same.
    assert.deepEqual((await drain(iterator)).changes.map(lv), ["p12@1", "p06@2"]);

    // Now(pk) ignores the past.
    const now = container.items.getChangeFeedIterator({ changeFeedStartFrom: ChangeFeedStartFrom.Now("odd") });
    assertNotModified(await now.readNext(), now);
    await w.replace("p09", 2);
    await w.replace("p10", 2);
    assert.deepEqual((await drain(now)).changes.map(lv), ["p09@2"]);
  });

  test("Beginning(pk) with number and boolean partition key values", async () => {
    const container = await fourRanges();
    await container.items.create({ id: "n1", pk: 42, v: 1 });
    await container.items.create({ id: "n2", pk: 42.5, v: 1 });
    await container.items.create({ id: "t1", pk: true, v: 1 });
    await container.items.create({ id: "f1", pk: false, v: 1 });
    await container.items.create({ id: "s1", pk: "42", v: 1 });
    await container.item("n1", 42).replace({ id: "n1", pk: 42, v: 2 });
    const read = async (pk) =>
      (await drain(container.items.getChangeFeedIterator({ changeFeedStartFrom: ChangeFeedStartFrom.Beginning(pk) })))
        .changes.map(lv);
    assert.deepEqual(await read(42), ["n1@2"]);
    assert.deepEqual(await read(42.5), ["n2@1"]);
    assert.deepEqual(await read(true), ["t1@1"]);
    assert.deepEqual(await read(false), ["f1@1"]);
    assert.deepEqual(await read("42"), ["s1@1"]);
  });

  test("feed ranges: each range has its own items, together every item once; Now(range), continuations stay in it", async () => {
    const container = await fourRanges();
    const w = recorder(container);
    for (let i = 0; i < 40; i++) await w.create(`r${pad(i)}`, `k${pad(i)}`);
    const ranges = await container.getFeedRanges();
    assert.equal(ranges.length, 4);

    const perRange = [];
    const tokens = [];
    const nows = [];
    for (const range of ranges) {
      const { changes, last } = await drain(
        container.items.getChangeFeedIterator({
          changeFeedStartFrom: ChangeFeedStartFrom.Beginning(range),
          maxItemCount: 5,
        }),
        { maxItemCount: 5 },
      );
      assert.ok(changes.length > 0, `range ${range.minInclusive}..${range.maxExclusive} has no items`);
      perRange.push(changes.map((it) => it.id));
      tokens.push(last.continuationToken);
      const now = container.items.getChangeFeedIterator({ changeFeedStartFrom: ChangeFeedStartFrom.Now(range) });
      assertNotModified(await now.readNext(), now);
      nows.push(now);
    }
    const all = perRange.flat();
    assertUnique(all, "items over the ranges");
    assert.deepEqual(sorted(all), sorted([...w.live.keys()]));

    // Replace every item: each range's iterators see their own items, at v2.
    for (const id of [...w.live.keys()]) await w.replace(id, 2);
    for (let r = 0; r < ranges.length; r++) {
      const want = sorted(perRange[r].map((id) => `${id}@2`));
      assert.deepEqual(sorted((await drain(nows[r])).changes.map(lv)), want, `Now(range ${r})`);
      const resumed = container.items.getChangeFeedIterator({
        changeFeedStartFrom: ChangeFeedStartFrom.Continuation(tokens[r]),
      });
      assert.deepEqual(sorted((await drain(resumed)).changes.map(lv)), want, `Continuation(range ${r})`);
    }
  });

  test("hierarchical keys: a prefix reads its tenant, the full key one user; Now(prefix) and continuations too", async () => {
    const { container } = await database.containers.create({
      id: uniqueId("hier"),
      partitionKey: { paths: ["/tenant", "/user"], kind: "MultiHash", version: 2 },
      throughput: 20000,
    });
    assert.ok((await container.getFeedRanges()).length > 1);
    const tag = (it) => `${it.tenant}/${it.user}/${it.id}@${it.v}`;
    const write = (tenant, user, id, v) => container.items.upsert({ id, tenant, user, v });
    for (const tenant of ["ta", "tb", "tc"]) {
      for (const user of ["u1", "u2", "u3"]) {
        for (const id of ["x", "y"]) await write(tenant, user, id, 1);
      }
    }
    await write("tb", "u1", "x", 2);
    await container.item("y", ["tb", "u3"]).delete();

    const read = (start) => drain(container.items.getChangeFeedIterator({ changeFeedStartFrom: start }));
    const tenant = await read(ChangeFeedStartFrom.Beginning(["tb"]));
    assert.deepEqual(tenant.changes.map(tag), [
      "tb/u1/y@1",
      "tb/u2/x@1",
      "tb/u2/y@1",
      "tb/u3/x@1",
      "tb/u1/x@2",
    ]);
    const user = await read(ChangeFeedStartFrom.Beginning(["tb", "u2"]));
    assert.deepEqual(user.changes.map(tag), ["tb/u2/x@1", "tb/u2/y@1"]);

    const nowTenant = container.items.getChangeFeedIterator({ changeFeedStartFrom: ChangeFeedStartFrom.Now(["tc"]) });
    assertNotModified(await nowTenant.readNext(), nowTenant);

    await write("tb", "u2", "x", 2);
    await write("tc", "u1", "x", 2);
    await write("tb", "u9", "z", 1);
    await write("ta", "u2", "x", 2);
    const resumedTenant = await read(ChangeFeedStartFrom.Continuation(tenant.last.continuationToken));
    assert.deepEqual(resumedTenant.changes.map(tag), ["tb/u2/x@2", "tb/u9/z@1"]);
    const resumedUser = await read(ChangeFeedStartFrom.Continuation(user.last.continuationToken));
    assert.deepEqual(resumedUser.changes.map(tag), ["tb/u2/x@2"]);
    assert.deepEqual((await drain(nowTenant)).changes.map(tag), ["tc/u1/x@2"]);
  });

  // ---- all versions and deletes ---------------------------------------------------------------

  test("AllVersionsAndDeletes from Now(): every create, replace, upsert, patch and delete once, in order, with metadata", async () => {
    const container = await fourRanges();
    const w = recorder(container);
    await w.create("before", "p"); // before the start: not shown
    const options = { changeFeedMode: ChangeFeedMode.AllVersionsAndDeletes, maxItemCount: 4 };
    const iterator = container.items.getChangeFeedIterator({
      ...options,
      changeFeedStartFrom: ChangeFeedStartFrom.Now(),
    });
    assertNotModified(await iterator.readNext(), iterator);

    const mark = w.mark();
    await w.create("a", "p", 1);
    await w.replace("a", 2);
    await w.upsert("b", "p", 1); // upsert of a new item: a create
    await w.upsert("a", "p", 3); // upsert of an existing item: a replace
    await w.patch("a", 4); // a patch: a replace
    await w.replace("b", 2);
    await w.remove("b");
    await w.remove("a");
    await w.create("a", "p", 5); // created again after its delete
    const { changes, last } = await drain(iterator, { maxItemCount: 4 });
    assert.deepEqual(changes.map(av), w.changes(mark));
    assert.deepEqual(changes.map(av), [
      "create a@1",
      "replace a@2",
      "create b@1",
      "replace a@3",
      "replace a@4",
      "replace b@2",
      "delete b@2",
      "delete a@4",
      "create a@5",
    ]);

    // Metadata: LSNs ascending (one partition key), the previous image's LSN for replaces and
    // deletes, commit times, and for deletes an empty current, the id and the deleted version.
    const lastLSN = new Map(); // id -> LSN of its previous change
    let prev = 0;
    for (const record of changes) {
      const { metadata: m } = record;
      const id = m.operationType === "delete" ? m.id : record.current.id;
      assert.ok(Number.isInteger(m.lsn) && m.lsn > prev, `lsn ${m.lsn} after ${prev}`);
      prev = m.lsn;
      assert.ok(Number.isInteger(m.crts) && m.crts > 0, `crts ${m.crts}`);
      assert.equal(m.timeToLiveExpired, false);
      if (m.operationType === "create") {
        assert.equal(m.previousImageLSN, undefined, `create of ${id}: previousImageLSN ${m.previousImageLSN}`);
      } else {
        assert.equal(m.previousImageLSN, lastLSN.get(id), `${m.operationType} of ${id}: previousImageLSN`);
      }
      if (m.operationType === "delete") {
        assert.deepEqual(record.current, {});
        assert.equal(m.id, id);
        assert.equal(record.previous.id, id);
        assert.equal(record.previous.pk, "p");
        assert.equal(typeof record.previous._etag, "string");
        assert.ok(m.crts >= record.previous._ts);
        lastLSN.delete(id);
      } else {
        assert.equal(record.current.pk, "p");
        assert.equal(m.crts, record.current._ts);
        assert.equal(typeof record.current._etag, "string");
        assert.equal(record.previous, undefined, `${m.operationType} of ${id} has a previous`);
        lastLSN.set(id, m.lsn);
      }
    }

    // The 304's continuation, in a new iterator (the mode given again), sees only what follows.
    const mark2 = w.mark();
    await w.create("c", "q", 1);
    await w.remove("a");
    await w.replace("before", 2);
    const resumed = container.items.getChangeFeedIterator({
      ...options,
      changeFeedStartFrom: ChangeFeedStartFrom.Continuation(last.continuationToken),
    });
    const later = await drain(resumed, { maxItemCount: 4 });
    assert.deepEqual(sorted(later.changes.map(av)), sorted(w.changes(mark2)));
    assert.deepEqual(sorted(later.changes.map(av)), ["create c@1", "delete a@5", "replace before@2"]);
    assertNotModified(await resumed.readNext(), resumed);
  });

  test("AllVersionsAndDeletes over 4 ranges: every change once, per item in order, resumed mid-feed from a page's token", async () => {
    const container = await fourRanges();
    const w = recorder(container);
    const options = { changeFeedMode: ChangeFeedMode.AllVersionsAndDeletes, maxItemCount: 3 };
    const iterator = container.items.getChangeFeedIterator({
      ...options,
      changeFeedStartFrom: ChangeFeedStartFrom.Now(),
    });
    assertNotModified(await iterator.readNext(), iterator);

    for (let i = 0; i < 16; i++) await w.create(`m${pad(i)}`, `k${i % 8}`);
    for (let i = 0; i < 16; i += 3) await w.replace(`m${pad(i)}`, 2);
    for (let i = 0; i < 16; i += 6) await w.replace(`m${pad(i)}`, 3);
    for (let i = 1; i < 16; i += 5) await w.remove(`m${pad(i)}`);
    await w.upsert("m01", "k1", 4); // created again

    // Two pages from the first iterator, the rest from a new one resumed from the second page.
    const head = [];
    let token;
    for (let i = 0; i < 2; i++) {
      const page = await iterator.readNext();
      assert.equal(page.statusCode, 200);
      assert.ok(page.result.length <= 3);
      head.push(...page.result);
      token = page.continuationToken;
    }
    const resumed = container.items.getChangeFeedIterator({
      ...options,
      changeFeedStartFrom: ChangeFeedStartFrom.Continuation(token),
    });
    const { changes: tail } = await drain(resumed, { maxItemCount: 3 });
    const all = [...head, ...tail];
    const keyOf = (r) => `${r.metadata.lsn}/${r.metadata.operationType === "delete" ? r.metadata.id : r.current.id}`;
    assertUnique(all.map(keyOf), "changes");
    assert.deepEqual(sorted(all.map(av)), sorted(w.changes()));
    // Per item, the changes come in the order they were made.
    const byItem = (entries) => {
      const m = new Map();
      for (const e of entries) {
        const id = e.split(" ")[1].split("@")[0];
        m.set(id, [...(m.get(id) ?? []), e]);
      }
      return m;
    };
    assert.deepEqual(byItem(all.map(av)), byItem(w.changes()));
  });

  test("AllVersionsAndDeletes from Beginning() or a point in time gives 400, as the service", async () => {
    const container = await fourRanges();
    for (const changeFeedStartFrom of [ChangeFeedStartFrom.Beginning(), ChangeFeedStartFrom.Time(new Date(Date.now() - 60_000))]) {
      const iterator = container.items.getChangeFeedIterator({ changeFeedMode: ChangeFeedMode.AllVersionsAndDeletes, changeFeedStartFrom });
      await assert.rejects(iterator.readNext(), (err) => err.code === 400 || /not supported/.test(err.message));
    }
  });

  test("the latest-version feed collapses the changes the all-versions feed lists one by one", async () => {
    const container = await fourRanges();
    const w = recorder(container);
    await w.create("keep", "p");
    const start = (mode) =>
      container.items.getChangeFeedIterator({
        changeFeedMode: mode,
        changeFeedStartFrom: ChangeFeedStartFrom.Now("p"),
      });
    const latest = start(ChangeFeedMode.LatestVersion);
    const versions = start(ChangeFeedMode.AllVersionsAndDeletes);
    assertNotModified(await latest.readNext(), latest);
    assertNotModified(await versions.readNext(), versions);

    await w.create("x", "p", 1);
    await w.replace("x", 2);
    await w.replace("x", 3);
    await w.replace("x", 4);
    await w.create("y", "p", 1);
    await w.remove("y");
    await w.create("other", "q"); // another partition key
    assert.deepEqual((await drain(latest)).changes.map(lv), ["x@4"]);
    assert.deepEqual((await drain(versions)).changes.map(av), [
      "create x@1",
      "replace x@2",
      "replace x@3",
      "replace x@4",
      "create y@1",
      "delete y@1",
    ]);
  });

  test("a transactional batch's changes come together in one page, under one LSN", async () => {
    const container = await fourRanges();
    await container.items.create({ id: "x", pk: "p", v: 0 });
    const iterator = container.items.getChangeFeedIterator({
      changeFeedMode: ChangeFeedMode.AllVersionsAndDeletes,
      changeFeedStartFrom: ChangeFeedStartFrom.Now("p"),
      maxItemCount: 2,
    });
    assertNotModified(await iterator.readNext(), iterator);
    const response = await container.items.batch(
      [
        { operationType: "Create", resourceBody: { id: "a", pk: "p", v: 1 } },
        { operationType: "Create", resourceBody: { id: "b", pk: "p", v: 1 } },
        { operationType: "Replace", id: "x", resourceBody: { id: "x", pk: "p", v: 1 } },
        { operationType: "Delete", id: "a" },
      ],
      "p",
    );
    assert.equal(response.code, 200);
    await container.item("b", "p").replace({ id: "b", pk: "p", v: 2 });
    const { pages } = await drain(iterator);
    assert.deepEqual(
      pages.map((p) => p.result.map(av)),
      [["create a@1", "create b@1", "replace x@1", "delete a@1"], ["replace b@2"]],
    );
    const lsns = new Set(pages[0].result.map((r) => r.metadata.lsn));
    assert.equal(lsns.size, 1, `one LSN for the batch: ${[...lsns]}`);
    assert.ok(pages[1].result[0].metadata.lsn > [...lsns][0]);
  });
});

// ---- splits -------------------------------------------------------------------------------------

suite("change feed through a split", (ctx) => {
  test("a split in the middle of reading: iterators and saved continuations see every change exactly once", async () => {
    const { database } = await ctx.client.databases.create({ id: uniqueId("db-changefeed-split") });
    const { container } = await database.containers.create({
      id: "split",
      partitionKey: { paths: ["/pk"], version: 2 },
      throughput: 400, // one physical partition
    });
    const { resources: parents } = await container.readPartitionKeyRanges().fetchAll();
    assert.equal(parents.length, 1);
    const w = recorder(container);

    const allVersions = container.items.getChangeFeedIterator({
      changeFeedMode: ChangeFeedMode.AllVersionsAndDeletes,
      changeFeedStartFrom: ChangeFeedStartFrom.Now(),
      maxItemCount: 7,
    });
    assertNotModified(await allVersions.readNext(), allVersions);

    for (let i = 0; i < 30; i++) await w.create(`s${pad(i)}`, `k${pad(i)}`);

    // Read part of the feed before the split.
    const latest = container.items.getChangeFeedIterator({
      changeFeedStartFrom: ChangeFeedStartFrom.Beginning(),
      maxItemCount: 5,
    });
    const head = [];
    let token;
    for (let i = 0; i < 2; i++) {
      const page = await latest.readNext();
      assert.equal(page.result.length, 5);
      head.push(...page.result.map(lv));
      token = page.continuationToken;
    }
    const versionsHead = await allVersions.readNext();
    assert.equal(versionsHead.result.length, 7);
    const versionsToken = versionsHead.continuationToken;
    const oneKey = container.items.getChangeFeedIterator({ changeFeedStartFrom: ChangeFeedStartFrom.Beginning("k25") });
    assert.deepEqual((await drain(oneKey)).changes.map(lv), ["s25@1"]);

    // Raising the throughput splits the partition before the offer replace answers.
    const { resource: offer, offer: ref } = await container.readOffer();
    await ref.replace({ ...offer, content: { offerThroughput: 20000 } });
    const ranges = await container.getFeedRanges();
    assert.equal(ranges.length, 2);

    // The parent's range id is gone: 410 with substatus 1002 (PartitionKeyRangeGone), which
    // sends the SDK to re-read the ranges and go on in the children.
    const gone = await rawRequest(ctx.server, {
      method: "GET",
      path: `/dbs/${database.id}/colls/${container.id}/docs`,
      headers: { "a-im": "Incremental Feed", "x-ms-documentdb-partitionkeyrangeid": parents[0].id },
    });
    assert.equal(gone.status, 410, JSON.stringify(gone.body));
    assert.equal(gone.headers["x-ms-substatus"], "1002");

    // Changes after the split, to items read before it and not yet read.
    const mark = w.mark();
    for (let i = 30; i < 40; i++) await w.create(`s${pad(i)}`, `k${pad(i)}`);
    for (const id of ["s01", "s03", "s20", "s25"]) await w.replace(id, 2);
    await w.remove("s05");
    await w.remove("s21");
    const touched = new Set(w.changes(mark).map((e) => e.split(" ")[1].split("@")[0]));
    const headIds = new Set(head.map((t) => t.split("@")[0]));
    const wantTail = sorted(
      w.latest().filter((t) => {
        const id = t.split("@")[0];
        return !headIds.has(id) || touched.has(id);
      }),
    );

    // The same iterator goes on in the two children.
    const tail = (await drain(latest, { maxItemCount: 5 })).changes.map(lv);
    assertUnique(tail, "latest version after the split");
    assert.deepEqual(sorted(tail), wantTail);
    // So does a new iterator from the continuation saved before the split.
    const resumed = container.items.getChangeFeedIterator({
      changeFeedStartFrom: ChangeFeedStartFrom.Continuation(token),
      maxItemCount: 5,
    });
    assert.deepEqual(sorted((await drain(resumed, { maxItemCount: 5 })).changes.map(lv)), wantTail);

    // All versions: the page before the split and the rest after it are every change once.
    const versionsTail = (await drain(allVersions, { maxItemCount: 7 })).changes;
    const versions = [...versionsHead.result, ...versionsTail].map(av);
    assertUnique(versions, "all versions");
    assert.deepEqual(sorted(versions), sorted(w.changes()));
    const versionsResumed = container.items.getChangeFeedIterator({
      changeFeedMode: ChangeFeedMode.AllVersionsAndDeletes,
      changeFeedStartFrom: ChangeFeedStartFrom.Continuation(versionsToken),
    });
    assert.deepEqual(
      sorted([...versionsHead.result, ...(await drain(versionsResumed)).changes].map(av)),
      sorted(w.changes()),
    );

    // The partition key's iterator sees its key's new version only.
    assert.deepEqual((await drain(oneKey)).changes.map(lv), ["s25@2"]);

    // Both children hold items, and from the beginning they hold every live item once.
    const perRange = [];
    for (const range of ranges) {
      const { changes } = await drain(
        container.items.getChangeFeedIterator({ changeFeedStartFrom: ChangeFeedStartFrom.Beginning(range) }),
      );
      assert.ok(changes.length > 0, `child ${range.minInclusive}..${range.maxExclusive} is empty`);
      perRange.push(...changes.map(lv));
    }
    assertUnique(perRange, "items over the children");
    assert.deepEqual(sorted(perRange), sorted(w.latest()));
  });
});
