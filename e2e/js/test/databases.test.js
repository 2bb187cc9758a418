// Databases: create (with and without provisioned throughput), read, list, delete.

import assert from "node:assert/strict";
import { test } from "node:test";

import { expectStatus, suite, uniqueId } from "../lib/harness.js";

/** The system properties every Cosmos resource carries. */
function assertSystemProperties(resource) {
  for (const prop of ["_rid", "_self", "_etag"]) {
    assert.equal(typeof resource[prop], "string", `${prop} missing`);
    assert.notEqual(resource[prop], "", `${prop} empty`);
  }
  assert.ok(Number.isInteger(resource._ts) && resource._ts > 0, `_ts is ${resource._ts}`);
}

suite("databases", (ctx) => {
  test("create without throughput, then read it", async () => {
    const id = uniqueId("db");
    const created = await ctx.client.databases.create({ id });
    assert.equal(created.statusCode, 201);
    assert.equal(created.resource.id, id);
    assertSystemProperties(created.resource);
    assert.ok(created.requestCharge > 0, `requestCharge ${created.requestCharge}`);

    const read = await created.database.read();
    assert.equal(read.statusCode, 200);
    assert.equal(read.resource.id, id);
    assert.equal(read.resource._rid, created.resource._rid);
    assert.equal(read.resource._etag, created.resource._etag);
  });

  test("create with throughput: 400", async () => {
    const id = uniqueId("db-tp");
    const created = await ctx.client.databases.create({ id, throughput: 400 });
    assert.equal(created.statusCode, 201);
    assert.equal(created.resource.id, id);
    const read = await ctx.client.database(id).read();
    assert.equal(read.resource.id, id);
  });

  test("create of an existing id is refused with 409", async () => {
    const id = uniqueId("db-dup");
    await ctx.client.databases.create({ id });
    await expectStatus(ctx.client.databases.create({ id }), 409);
  });

  test("createIfNotExists creates once, then reads", async () => {
    const id = uniqueId("db-ine");
    const first = await ctx.client.databases.createIfNotExists({ id });
    assert.equal(first.statusCode, 201);
    const second = await ctx.client.databases.createIfNotExists({ id });
    assert.equal(second.statusCode, 200);
    assert.equal(second.resource._rid, first.resource._rid);
  });

  test("readAll lists the databases", async () => {
    const ids = [uniqueId("db-list"), uniqueId("db-list"), uniqueId("db-list")];
    for (const id of ids) await ctx.client.databases.create({ id });
    const { resources } = await ctx.client.databases.readAll().fetchAll();
    const listed = resources.map((d) => d.id);
    for (const id of ids) assert.ok(listed.includes(id), `${id} not listed in ${listed}`);
    assert.equal(new Set(listed).size, listed.length, `duplicates in ${listed}`);
    for (const db of resources) assertSystemProperties(db);
  });

  test("readAll pages with maxItemCount", async () => {
    const ids = [uniqueId("db-page"), uniqueId("db-page"), uniqueId("db-page")];
    for (const id of ids) await ctx.client.databases.create({ id });
    const iterator = ctx.client.databases.readAll({ maxItemCount: 1 });
    const seen = [];
    while (iterator.hasMoreResults()) {
      const page = await iterator.fetchNext();
      assert.ok(page.resources.length <= 1, `page of ${page.resources.length}`);
      seen.push(...page.resources.map((d) => d.id));
    }
    for (const id of ids) assert.ok(seen.includes(id), `${id} not listed in ${seen}`);
    assert.equal(new Set(seen).size, seen.length, `duplicates in ${seen}`);
  });

  test("delete, then read and delete again give 404", async () => {
    const id = uniqueId("db-del");
    const { database } = await ctx.client.databases.create({ id });
    const deleted = await database.delete();
    assert.equal(deleted.statusCode, 204);
    await expectStatus(database.read(), 404);
    await expectStatus(database.delete(), 404);
    const { resources } = await ctx.client.databases.readAll().fetchAll();
    assert.ok(!resources.some((d) => d.id === id), "deleted database still listed");
  });

  test("deleting a database deletes its containers", async () => {
    const id = uniqueId("db-cascade");
    const { database } = await ctx.client.databases.create({ id });
    const { container } = await database.containers.create({ id: "c", partitionKey: { paths: ["/pk"] } });
    await container.items.create({ id: "1", pk: "a" });
    await database.delete();
    // Recreate under the same id: it must come back empty.
    const { database: again } = await ctx.client.databases.create({ id });
    await expectStatus(again.container("c").read(), 404);
  });

  test("reading a database that never existed gives 404", async () => {
    await expectStatus(ctx.client.database(uniqueId("db-none")).read(), 404);
  });
});
