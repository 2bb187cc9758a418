// Bad input: invalid ids, oversized items, partition key mismatches, unknown resources.

import assert from "node:assert/strict";
import { before, test } from "node:test";

import { expectStatus, rawRequest, suite, uniqueId } from "../lib/harness.js";

suite("errors", (ctx) => {
  let database;
  let container; // partition key /pk
  before(async () => {
    ({ database } = await ctx.client.databases.create({ id: uniqueId("db-errors") }));
    ({ container } = await database.containers.create({ id: "c", partitionKey: { paths: ["/pk"] } }));
  });

  test("the SDK itself refuses an item id containing '/'", async () => {
    // @azure/cosmos validates ids before sending ("Id contains illegal chars."), so the server
    // check is tested with a raw request below.
    await assert.rejects(container.items.create({ id: "a/b", pk: "p" }), (err) => {
      assert.equal(err.code, undefined, "the request must not have reached the server");
      assert.match(err.message, /illegal chars/);
      return true;
    });
  });

  test("create of an item whose id contains '/' is refused with 400 (raw REST)", async () => {
    const res = await rawRequest(ctx.server, {
      method: "POST",
      path: `/dbs/${database.id}/colls/${container.id}/docs`,
      headers: { "x-ms-documentdb-partitionkey": '["p"]' },
      body: { id: "a/b", pk: "p" },
    });
    assert.equal(res.status, 400, JSON.stringify(res.body));
    assert.equal(typeof res.body?.message, "string");
  });

  test("create of an item whose id contains '\\' or '#' is refused with 400 (raw REST)", async () => {
    for (const id of ["a\\b", "a#b"]) {
      const res = await rawRequest(ctx.server, {
        method: "POST",
        path: `/dbs/${database.id}/colls/${container.id}/docs`,
        headers: { "x-ms-documentdb-partitionkey": '["p"]' },
        body: { id, pk: "p" },
      });
      assert.equal(res.status, 400, `${JSON.stringify(id)}: ${JSON.stringify(res.body)}`);
    }
  });

  test("create of an item whose id contains '?' is refused with 400", async () => {
    // The SDK lets '?' through for items; such an item could not be addressed by URL later.
    await expectStatus(container.items.create({ id: "a?b", pk: "p" }), 400);
  });

  test("an item over 2 MB is refused with 413", async () => {
    const id = uniqueId("huge");
    const data = "x".repeat(2 * 1024 * 1024 + 1024);
    await expectStatus(container.items.create({ id, pk: "p", data }), 413);
    assert.equal((await container.item(id, "p").read()).statusCode, 404);
  });

  test("a replace over 2 MB is refused with 413 and leaves the item as it was", async () => {
    const id = uniqueId("huge");
    await container.items.create({ id, pk: "p", v: 1 });
    const data = "x".repeat(2 * 1024 * 1024 + 1024);
    await expectStatus(container.item(id, "p").replace({ id, pk: "p", data }), 413);
    assert.equal((await container.item(id, "p").read()).resource.v, 1);
  });

  test("replace with a body partition key other than the addressed one gives 400", async () => {
    const id = uniqueId("i");
    await container.items.create({ id, pk: "a" });
    await expectStatus(container.item(id, "b").replace({ id, pk: "a", v: 2 }), 400);
    await expectStatus(container.item(id, "a").replace({ id, pk: "b", v: 2 }), 400);
    const read = await container.item(id, "a").read();
    assert.equal(read.resource.v, undefined, "the refused replace must not have been applied");
  });

  test("create with a partition key header other than the body's gives 400 (raw REST)", async () => {
    const id = uniqueId("i");
    const res = await rawRequest(ctx.server, {
      method: "POST",
      path: `/dbs/${database.id}/colls/${container.id}/docs`,
      headers: { "x-ms-documentdb-partitionkey": '["b"]' },
      body: { id, pk: "a" },
    });
    assert.equal(res.status, 400, JSON.stringify(res.body));
    assert.equal((await container.item(id, "a").read()).statusCode, 404);
    assert.equal((await container.item(id, "b").read()).statusCode, 404);
  });

  test("a partition key value of the wrong type for the body is a mismatch (400)", async () => {
    const id = uniqueId("i");
    await container.items.create({ id, pk: 5 });
    await expectStatus(container.item(id, "5").replace({ id, pk: 5 }), 400);
  });

  test("item operations in a container that does not exist give 404", async () => {
    const missing = database.container(uniqueId("c-none"));
    await expectStatus(missing.items.create({ id: "1", pk: "p" }), 404);
    await expectStatus(missing.item("1", "p").replace({ id: "1", pk: "p" }), 404);
    await expectStatus(missing.item("1", "p").delete(), 404);
  });

  test("an unknown resource path gives 404 (raw REST)", async () => {
    const res = await rawRequest(ctx.server, { method: "GET", path: "/nosuchthing/x" });
    assert.equal(res.status, 404, JSON.stringify(res.body));
  });

  test("an unsigned request is refused with 401 (raw REST)", async () => {
    const res = await rawRequest(ctx.server, { method: "GET", path: "/dbs", headers: { authorization: "" } });
    assert.equal(res.status, 401, JSON.stringify(res.body));
  });
});
