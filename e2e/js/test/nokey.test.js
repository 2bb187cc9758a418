// Containers created without a partition key, as the SDKs up to 2.x, Python's 3.x and the
// Azure CLI create them: the server shows them with the system key, /_partitionKey
// (systemKey: true), and this SDK then names the "none" key ([]) for items that have no
// _partitionKey, and their value for those that have one.

import assert from "node:assert/strict";
import { before, test } from "node:test";

import { ChangeFeedStartFrom } from "@azure/cosmos";

import { rawRequest, suite, uniqueId } from "../lib/harness.js";

suite("containers without a partition key", (ctx) => {
  let database;
  let container;
  before(async () => {
    ({ database } = await ctx.client.databases.create({ id: uniqueId("db-nokey") }));
    // Created as a legacy client creates it: no partitionKey at all.
    const res = await rawRequest(ctx.server, { method: "POST", path: `/dbs/${database.id}/colls`, body: { id: "legacy" } });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    container = database.container("legacy");
  });

  test("the container shows the system key", async () => {
    const { resource } = await container.read();
    assert.deepEqual(resource.partitionKey, { paths: ["/_partitionKey"], kind: "Hash", systemKey: true });
  });

  test("items without _partitionKey are written and read without naming a key", async () => {
    for (const id of ["a", "b", "c"]) {
      const { statusCode } = await container.items.create({ id, n: id.charCodeAt(0) });
      assert.equal(statusCode, 201);
    }
    const { resource, statusCode } = await container.item("b").read();
    assert.equal(statusCode, 200);
    assert.equal(resource.n, 98);
    const { resource: replaced } = await container.item("b").replace({ id: "b", n: 1 });
    assert.equal(replaced.n, 1);
    const { resource: upserted } = await container.items.upsert({ id: "c", n: 2 });
    assert.equal(upserted.n, 2);
    assert.equal((await container.item("a").delete()).statusCode, 204);
    assert.equal((await container.item("a").read()).statusCode, 404);
  });

  test("items with a _partitionKey value are read under it", async () => {
    await container.items.create({ id: "k1", _partitionKey: "p1", n: 10 });
    assert.equal((await container.item("k1", "p1").read()).resource.n, 10);
    assert.equal((await container.item("k1").read()).statusCode, 404, "not in the none logical partition");
  });

  test("a query and the change feed see every item", async () => {
    const { resources } = await container.items.query("SELECT VALUE c.id FROM c").fetchAll();
    assert.deepEqual([...resources].sort(), ["b", "c", "k1"]);
    const iterator = container.items.getChangeFeedIterator({ changeFeedStartFrom: ChangeFeedStartFrom.Beginning() });
    const seen = [];
    for (let i = 0; i < 20; i++) {
      const page = await iterator.readNext();
      if (page.statusCode === 304) break;
      seen.push(...page.result.map((d) => d.id));
    }
    assert.deepEqual(seen.sort(), ["b", "c", "k1"]);
  });

  test("a stored procedure runs in the none logical partition", async () => {
    const body = `function () {
      __.queryDocuments(__.getSelfLink(), "SELECT VALUE COUNT(1) FROM c", function (err, r) {
        if (err) throw err; getContext().getResponse().setBody(r[0]); }); }`;
    await container.scripts.storedProcedures.create({ id: "count", body });
    const { resource } = await container.scripts.storedProcedure("count").execute(undefined, []);
    assert.equal(resource, 2, "b and c, not k1");
  });

  test("created with more than 10,000 RU/s it is refused", async () => {
    const res = await rawRequest(ctx.server, {
      method: "POST",
      path: `/dbs/${database.id}/colls`,
      headers: { "x-ms-offer-throughput": "20000" },
      body: { id: "big" },
    });
    assert.equal(res.status, 400, JSON.stringify(res.body));
  });
});
