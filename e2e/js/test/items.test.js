// Items: point reads and writes, optimistic concurrency, partition key kinds and values, and
// the read feed with paging.

import assert from "node:assert/strict";
import { before, test } from "node:test";

import { expectStatus, suite, uniqueId } from "../lib/harness.js";

/** Drops the system properties so that bodies can be compared with what was written. */
function userProps(item) {
  return Object.fromEntries(Object.entries(item).filter(([k]) => !k.startsWith("_")));
}

suite("items", (ctx) => {
  let database;
  let container; // partition key /pk
  let hier; // partition key /tenant, /user (MultiHash)
  before(async () => {
    ({ database } = await ctx.client.databases.create({ id: uniqueId("db-items") }));
    ({ container } = await database.containers.create({ id: "items", partitionKey: { paths: ["/pk"] } }));
    ({ container: hier } = await database.containers.create({
      id: "hier",
      partitionKey: { paths: ["/tenant", "/user"], kind: "MultiHash", version: 2 },
    }));
  });

  test("create returns 201 with the body and system properties", async () => {
    const body = { id: uniqueId("i"), pk: "p1", n: 1, nested: { a: [1, "two", null, true] } };
    const created = await container.items.create(body);
    assert.equal(created.statusCode, 201);
    assert.ok(created.requestCharge > 0, `requestCharge ${created.requestCharge}`);
    assert.deepEqual(userProps(created.resource), body);
    for (const prop of ["_rid", "_self", "_etag"]) assert.equal(typeof created.resource[prop], "string", prop);
    assert.ok(Number.isInteger(created.resource._ts) && created.resource._ts > 0);
    assert.equal(created.etag, created.resource._etag);
  });

  test("read returns what was written", async () => {
    const body = { id: uniqueId("i"), pk: "p1", text: "héllo wörld ✓", big: 12345678901, f: 1.5 };
    const created = await container.items.create(body);
    const read = await container.item(body.id, "p1").read();
    assert.equal(read.statusCode, 200);
    assert.ok(read.requestCharge > 0, `requestCharge ${read.requestCharge}`);
    assert.deepEqual(userProps(read.resource), body);
    assert.equal(read.resource._etag, created.resource._etag);
    assert.equal(read.resource._rid, created.resource._rid);
    assert.equal(read.etag, created.etag);
  });

  test("read of a missing item gives statusCode 404", async () => {
    const missing = await container.item(uniqueId("missing"), "p1").read();
    assert.equal(missing.statusCode, 404);
    assert.equal(missing.resource, undefined);
  });

  test("replace changes the body and the etag", async () => {
    const id = uniqueId("i");
    const created = await container.items.create({ id, pk: "p1", v: 1 });
    const replaced = await container.item(id, "p1").replace({ id, pk: "p1", v: 2, extra: "x" });
    assert.equal(replaced.statusCode, 200);
    assert.ok(replaced.requestCharge > 0);
    assert.deepEqual(userProps(replaced.resource), { id, pk: "p1", v: 2, extra: "x" });
    assert.notEqual(replaced.resource._etag, created.resource._etag);
    const read = await container.item(id, "p1").read();
    assert.deepEqual(userProps(read.resource), { id, pk: "p1", v: 2, extra: "x" });
    assert.equal(read.resource._etag, replaced.resource._etag);
  });

  test("replace of a missing item gives 404", async () => {
    const id = uniqueId("missing");
    await expectStatus(container.item(id, "p1").replace({ id, pk: "p1" }), 404);
  });

  test("replace with IfMatch: current etag succeeds, stale etag gives 412", async () => {
    const id = uniqueId("i");
    const created = await container.items.create({ id, pk: "p1", v: 1 });
    const staleEtag = created.resource._etag;
    const ok = await container
      .item(id, "p1")
      .replace({ id, pk: "p1", v: 2 }, { accessCondition: { type: "IfMatch", condition: staleEtag } });
    assert.equal(ok.statusCode, 200);
    await expectStatus(
      container.item(id, "p1").replace({ id, pk: "p1", v: 3 }, { accessCondition: { type: "IfMatch", condition: staleEtag } }),
      412,
    );
    const read = await container.item(id, "p1").read();
    assert.equal(read.resource.v, 2, "the refused replace must not have been applied");
  });

  test("delete with a stale IfMatch etag gives 412", async () => {
    const id = uniqueId("i");
    const created = await container.items.create({ id, pk: "p1" });
    await container.item(id, "p1").replace({ id, pk: "p1", v: 2 });
    await expectStatus(
      container.item(id, "p1").delete({ accessCondition: { type: "IfMatch", condition: created.resource._etag } }),
      412,
    );
    assert.equal((await container.item(id, "p1").read()).statusCode, 200);
  });

  test("upsert creates (201), then replaces (200)", async () => {
    const id = uniqueId("i");
    const first = await container.items.upsert({ id, pk: "p1", v: 1 });
    assert.equal(first.statusCode, 201);
    assert.ok(first.requestCharge > 0);
    const second = await container.items.upsert({ id, pk: "p1", v: 2 });
    assert.equal(second.statusCode, 200);
    assert.notEqual(second.resource._etag, first.resource._etag);
    assert.equal(second.resource._rid, first.resource._rid);
    const read = await container.item(id, "p1").read();
    assert.equal(read.resource.v, 2);
  });

  test("delete returns 204; the item is gone afterwards", async () => {
    const id = uniqueId("i");
    await container.items.create({ id, pk: "p1" });
    const deleted = await container.item(id, "p1").delete();
    assert.equal(deleted.statusCode, 204);
    assert.ok(deleted.requestCharge > 0);
    assert.equal((await container.item(id, "p1").read()).statusCode, 404);
    await expectStatus(container.item(id, "p1").delete(), 404);
  });

  test("a deleted item can be created again", async () => {
    const id = uniqueId("i");
    await container.items.create({ id, pk: "p1", v: 1 });
    await container.item(id, "p1").delete();
    const again = await container.items.create({ id, pk: "p1", v: 2 });
    assert.equal(again.statusCode, 201);
    assert.equal((await container.item(id, "p1").read()).resource.v, 2);
  });

  test("create of an existing (pk, id) gives 409", async () => {
    const id = uniqueId("i");
    await container.items.create({ id, pk: "p1", v: 1 });
    await expectStatus(container.items.create({ id, pk: "p1", v: 2 }), 409);
    assert.equal((await container.item(id, "p1").read()).resource.v, 1);
  });

  test("the same id under two partition keys are two items", async () => {
    const id = uniqueId("i");
    await container.items.create({ id, pk: "a", side: "a" });
    await container.items.create({ id, pk: "b", side: "b" });
    assert.equal((await container.item(id, "a").read()).resource.side, "a");
    assert.equal((await container.item(id, "b").read()).resource.side, "b");
    await container.item(id, "a").delete();
    assert.equal((await container.item(id, "a").read()).statusCode, 404);
    assert.equal((await container.item(id, "b").read()).resource.side, "b");
  });

  test("number, boolean and null partition key values", async () => {
    const id = uniqueId("i");
    const cases = [
      { pk: 5, label: "number" },
      { pk: -2.25, label: "fraction" },
      { pk: true, label: "true" },
      { pk: false, label: "false" },
      { pk: null, label: "null" },
      { pk: "5", label: "string 5" },
      { pk: "", label: "empty string" },
    ];
    for (const { pk, label } of cases) {
      const created = await container.items.create({ id, pk, label });
      assert.equal(created.statusCode, 201, label);
    }
    // Each value is its own logical partition: "5" is not 5, false is not null.
    for (const { pk, label } of cases) {
      const read = await container.item(id, pk).read();
      assert.equal(read.statusCode, 200, `read ${label}`);
      assert.equal(read.resource.label, label);
      assert.equal(read.resource.pk, pk);
    }
    for (const { pk, label } of cases) {
      const replaced = await container.item(id, pk).replace({ id, pk, label, replaced: true });
      assert.equal(replaced.statusCode, 200, `replace ${label}`);
      const deleted = await container.item(id, pk).delete();
      assert.equal(deleted.statusCode, 204, `delete ${label}`);
    }
  });

  test("an item without the partition key property is addressed with undefined", async () => {
    const id = uniqueId("i");
    const created = await container.items.create({ id, other: 1 });
    assert.equal(created.statusCode, 201);
    const read = await container.item(id, undefined).read();
    assert.equal(read.statusCode, 200);
    assert.equal(read.resource.other, 1);
    // undefined is not null
    assert.equal((await container.item(id, null).read()).statusCode, 404);
    assert.equal((await container.item(id, undefined).delete()).statusCode, 204);
  });

  test("an item whose partition key is an object or array is filed under undefined", async () => {
    // The SDK sends [{}] for such items, as the official bulk samples' items show.
    for (const pk of [{ nested: 1 }, [1, 2]]) {
      const id = uniqueId("i");
      const created = await container.items.create({ id, pk });
      assert.equal(created.statusCode, 201);
      const read = await container.item(id, undefined).read();
      assert.equal(read.statusCode, 200);
      assert.deepEqual(read.resource.pk, pk);
      assert.equal((await container.item(id, undefined).delete()).statusCode, 204);
    }
  });

  test("ids with spaces, unicode and URL-special characters round-trip", async () => {
    for (const id of ["a b", "ü-é-中文-😀", "a+b=c&d;e", "%41", "it's", "dots...", "a:b@c!$"]) {
      const created = await container.items.create({ id, pk: "special" });
      assert.equal(created.statusCode, 201, `create ${JSON.stringify(id)}`);
      const read = await container.item(id, "special").read();
      assert.equal(read.statusCode, 200, `read ${JSON.stringify(id)}`);
      assert.equal(read.resource.id, id);
      assert.equal((await container.item(id, "special").delete()).statusCode, 204, `delete ${JSON.stringify(id)}`);
    }
  });

  test("an item of 1.5 MB is stored and read back", async () => {
    const id = uniqueId("big");
    const data = "x".repeat(1_500_000);
    await container.items.create({ id, pk: "big", data });
    const read = await container.item(id, "big").read();
    assert.equal(read.resource.data.length, data.length);
    await container.item(id, "big").delete();
  });

  test("hierarchical keys: create, read, replace, upsert, delete with [tenant, user]", async () => {
    const id = uniqueId("h");
    const created = await hier.items.create({ id, tenant: "t1", user: "u1", v: 1 });
    assert.equal(created.statusCode, 201);
    const read = await hier.item(id, ["t1", "u1"]).read();
    assert.equal(read.statusCode, 200);
    assert.equal(read.resource.v, 1);

    // Same id, other full keys: separate items.
    await hier.items.create({ id, tenant: "t1", user: "u2", v: 2 });
    await hier.items.create({ id, tenant: "t2", user: "u1", v: 3 });
    assert.equal((await hier.item(id, ["t1", "u2"]).read()).resource.v, 2);
    assert.equal((await hier.item(id, ["t2", "u1"]).read()).resource.v, 3);
    assert.equal((await hier.item(id, ["t2", "u2"]).read()).statusCode, 404);
    await expectStatus(hier.items.create({ id, tenant: "t1", user: "u1" }), 409);

    const replaced = await hier.item(id, ["t1", "u1"]).replace({ id, tenant: "t1", user: "u1", v: 10 });
    assert.equal(replaced.statusCode, 200);
    const upserted = await hier.items.upsert({ id, tenant: "t1", user: "u1", v: 11 });
    assert.equal(upserted.statusCode, 200);
    assert.equal((await hier.item(id, ["t1", "u1"]).read()).resource.v, 11);

    assert.equal((await hier.item(id, ["t1", "u1"]).delete()).statusCode, 204);
    assert.equal((await hier.item(id, ["t1", "u1"]).read()).statusCode, 404);
    assert.equal((await hier.item(id, ["t1", "u2"]).read()).resource.v, 2);
  });

  test("hierarchical keys with number, boolean and null components", async () => {
    const id = uniqueId("h");
    for (const key of [[1, true], [null, "u"], ["t", false], [1, "true"]]) {
      await hier.items.create({ id, tenant: key[0], user: key[1], key: JSON.stringify(key) });
    }
    for (const key of [[1, true], [null, "u"], ["t", false], [1, "true"]]) {
      const read = await hier.item(id, key).read();
      assert.equal(read.statusCode, 200, `read ${JSON.stringify(key)}`);
      assert.equal(read.resource.key, JSON.stringify(key));
    }
  });

  // ---- read feed -----------------------------------------------------------------------------
  //
  // In @azure/cosmos, items.readAll() is the SQL query "SELECT * from c" (a POST with
  // x-ms-documentdb-isquery), not the REST read feed. The read feed (GET .../docs with
  // x-ms-max-item-count / x-ms-continuation) is what the SDK sends for items.query(undefined),
  // so that is how these tests reach it. readAll() itself is covered at the end (and over
  // several physical partitions in queries.test.js).

  /** A fresh container holding n items spread over 3 logical partitions. */
  async function containerWithItems(n) {
    const { container: c } = await database.containers.create({
      id: uniqueId("feed"),
      partitionKey: { paths: ["/pk"] },
    });
    const ids = [];
    for (let i = 0; i < n; i++) {
      const id = `item-${String(i).padStart(2, "0")}`;
      await c.items.create({ id, pk: `p${i % 3}`, i });
      ids.push(id);
    }
    return { c, ids };
  }

  /** Reads the whole feed page by page; returns the pages' ids and continuation tokens. */
  async function readFeedPages(iterator) {
    const pages = [];
    while (iterator.hasMoreResults()) {
      const page = await iterator.fetchNext();
      pages.push({ ids: page.resources.map((r) => r.id), continuation: page.continuationToken, charge: page.requestCharge });
    }
    return pages;
  }

  test("read feed returns every item once", async () => {
    const { c, ids } = await containerWithItems(7);
    const { resources } = await c.items.query(undefined).fetchAll();
    assert.deepEqual(resources.map((r) => r.id).sort(), ids);
    for (const r of resources) assert.equal(typeof r._etag, "string");
  });

  test("read feed pages with maxItemCount: 2 and continuation tokens", async () => {
    const { c, ids } = await containerWithItems(7);
    const pages = await readFeedPages(c.items.query(undefined, { maxItemCount: 2 }));
    const seen = pages.flatMap((p) => p.ids);
    assert.deepEqual([...seen].sort(), ids, `pages: ${JSON.stringify(pages)}`);
    assert.equal(new Set(seen).size, seen.length, `an item came twice: ${JSON.stringify(pages)}`);
    for (const p of pages) {
      assert.ok(p.ids.length <= 2, `page over maxItemCount: ${JSON.stringify(p)}`);
      assert.ok(p.charge > 0, `requestCharge ${p.charge}`);
    }
    assert.ok(pages.length >= 4, `7 items in pages of 2 need 4 pages, got ${pages.length}`);
    // Every page but the last hands out a continuation; the last does not.
    for (const p of pages.slice(0, -1)) assert.ok(p.continuation, `no continuation: ${JSON.stringify(pages)}`);
    assert.equal(pages.at(-1).continuation, undefined);
  });

  test("read feed resumes from a continuation token in a new iterator", async () => {
    const { c, ids } = await containerWithItems(5);
    const first = await c.items.query(undefined, { maxItemCount: 2 }).fetchNext();
    assert.equal(first.resources.length, 2);
    assert.ok(first.continuationToken, "no continuation after the first page");
    const rest = await readFeedPages(
      c.items.query(undefined, { maxItemCount: 2, continuationToken: first.continuationToken }),
    );
    const seen = [...first.resources.map((r) => r.id), ...rest.flatMap((p) => p.ids)];
    assert.deepEqual([...seen].sort(), ids);
  });

  test("read feed of one logical partition (partitionKey option)", async () => {
    const { c, ids } = await containerWithItems(7);
    const { resources } = await c.items.query(undefined, { partitionKey: "p1" }).fetchAll();
    const expected = ids.filter((_, i) => i % 3 === 1);
    assert.deepEqual(resources.map((r) => r.id).sort(), expected);
  });

  test("read feed of an empty container is empty", async () => {
    const { c } = await containerWithItems(0);
    const { resources } = await c.items.query(undefined).fetchAll();
    assert.deepEqual(resources, []);
  });

  test("readAll().fetchAll() returns every item", async () => {
    const { c, ids } = await containerWithItems(5);
    const { resources } = await c.items.readAll().fetchAll();
    assert.deepEqual(resources.map((r) => r.id).sort(), ids);
  });

  test("readAll({ maxItemCount: 2 }) pages through every item once", async () => {
    const { c, ids } = await containerWithItems(5);
    const pages = await readFeedPages(c.items.readAll({ maxItemCount: 2 }));
    const seen = pages.flatMap((p) => p.ids);
    assert.deepEqual([...seen].sort(), ids);
    assert.equal(new Set(seen).size, seen.length, `an item came twice: ${JSON.stringify(pages)}`);
    for (const p of pages) assert.ok(p.ids.length <= 2);
  });
});
