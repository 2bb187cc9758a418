// Containers: create with single, hierarchical (MultiHash) and autoscale settings; read, list,
// delete; invalid partition key definitions.

import assert from "node:assert/strict";
import { before, test } from "node:test";

import { expectStatus, suite, uniqueId } from "../lib/harness.js";

suite("containers", (ctx) => {
  let database;
  before(async () => {
    ({ database } = await ctx.client.databases.create({ id: uniqueId("db-containers") }));
  });

  test("create with partition key /pk, then read it", async () => {
    const id = uniqueId("c-pk");
    const created = await database.containers.create({ id, partitionKey: { paths: ["/pk"] } });
    assert.equal(created.statusCode, 201);
    assert.equal(created.resource.id, id);
    assert.deepEqual(created.resource.partitionKey.paths, ["/pk"]);
    assert.equal(created.resource.partitionKey.kind, "Hash");
    for (const prop of ["_rid", "_self", "_etag"]) assert.equal(typeof created.resource[prop], "string");
    assert.ok(created.resource._ts > 0);
    assert.ok(created.resource.indexingPolicy, "no indexingPolicy");

    const read = await created.container.read();
    assert.equal(read.statusCode, 200);
    assert.equal(read.resource.id, id);
    assert.equal(read.resource._rid, created.resource._rid);
    assert.deepEqual(read.resource.partitionKey, created.resource.partitionKey);
  });

  test("create with the partition key path as a string", async () => {
    const id = uniqueId("c-pkstr");
    const { resource } = await database.containers.create({ id, partitionKey: "/pk" });
    assert.deepEqual(resource.partitionKey.paths, ["/pk"]);
  });

  test("create with a hierarchical (MultiHash, version 2) partition key", async () => {
    const id = uniqueId("c-hier");
    const partitionKey = { paths: ["/tenant", "/user"], kind: "MultiHash", version: 2 };
    const created = await database.containers.create({ id, partitionKey });
    assert.equal(created.statusCode, 201);
    assert.deepEqual(created.resource.partitionKey.paths, ["/tenant", "/user"]);
    assert.equal(created.resource.partitionKey.kind, "MultiHash");
    assert.equal(created.resource.partitionKey.version, 2);
    const read = await created.container.read();
    assert.deepEqual(read.resource.partitionKey, created.resource.partitionKey);
  });

  test("create with manual throughput: 400", async () => {
    const id = uniqueId("c-tp");
    const created = await database.containers.create({ id, partitionKey: { paths: ["/pk"] }, throughput: 400 });
    assert.equal(created.statusCode, 201);
    assert.equal((await created.container.read()).resource.id, id);
  });

  test("create with autoscale maxThroughput", async () => {
    const id = uniqueId("c-auto");
    const created = await database.containers.create({ id, partitionKey: { paths: ["/pk"] }, maxThroughput: 4000 });
    assert.equal(created.statusCode, 201);
    assert.equal((await created.container.read()).resource.id, id);
  });

  test("create of an existing id is refused with 409", async () => {
    const id = uniqueId("c-dup");
    await database.containers.create({ id, partitionKey: { paths: ["/pk"] } });
    await expectStatus(database.containers.create({ id, partitionKey: { paths: ["/pk"] } }), 409);
  });

  test("createIfNotExists creates once, then reads", async () => {
    const id = uniqueId("c-ine");
    const first = await database.containers.createIfNotExists({ id, partitionKey: { paths: ["/pk"] } });
    assert.equal(first.statusCode, 201);
    const second = await database.containers.createIfNotExists({ id, partitionKey: { paths: ["/pk"] } });
    assert.equal(second.statusCode, 200);
    assert.equal(second.resource._rid, first.resource._rid);
  });

  test("readAll lists the containers of the database", async () => {
    const { database: db } = await ctx.client.databases.create({ id: uniqueId("db-clist") });
    const ids = [uniqueId("c-list"), uniqueId("c-list"), uniqueId("c-list")];
    for (const id of ids) await db.containers.create({ id, partitionKey: { paths: ["/pk"] } });
    const { resources } = await db.containers.readAll().fetchAll();
    assert.deepEqual(resources.map((c) => c.id).sort(), [...ids].sort());
    for (const c of resources) assert.deepEqual(c.partitionKey.paths, ["/pk"]);
  });

  test("readAll pages with maxItemCount", async () => {
    const { database: db } = await ctx.client.databases.create({ id: uniqueId("db-cpage") });
    const ids = [uniqueId("c-page"), uniqueId("c-page"), uniqueId("c-page")];
    for (const id of ids) await db.containers.create({ id, partitionKey: { paths: ["/pk"] } });
    const iterator = db.containers.readAll({ maxItemCount: 1 });
    const seen = [];
    while (iterator.hasMoreResults()) {
      const page = await iterator.fetchNext();
      assert.ok(page.resources.length <= 1, `page of ${page.resources.length}`);
      seen.push(...page.resources.map((c) => c.id));
    }
    assert.deepEqual([...seen].sort(), [...ids].sort());
  });

  test("delete, then read and delete again give 404", async () => {
    const id = uniqueId("c-del");
    const { container } = await database.containers.create({ id, partitionKey: { paths: ["/pk"] } });
    const deleted = await container.delete();
    assert.equal(deleted.statusCode, 204);
    await expectStatus(container.read(), 404);
    await expectStatus(container.delete(), 404);
    const { resources } = await database.containers.readAll().fetchAll();
    assert.ok(!resources.some((c) => c.id === id), "deleted container still listed");
  });

  test("a container recreated under a deleted one's id starts empty", async () => {
    const id = uniqueId("c-recreate");
    const { container } = await database.containers.create({ id, partitionKey: { paths: ["/pk"] } });
    await container.items.create({ id: "1", pk: "a" });
    await container.delete();
    const { container: again } = await database.containers.create({ id, partitionKey: { paths: ["/pk"] } });
    const { statusCode } = await again.item("1", "a").read();
    assert.equal(statusCode, 404);
  });

  test("create in a database that does not exist gives 404", async () => {
    const db = ctx.client.database(uniqueId("db-none"));
    await expectStatus(db.containers.create({ id: "c", partitionKey: { paths: ["/pk"] } }), 404);
  });

  test("reading a container that never existed gives 404", async () => {
    await expectStatus(database.container(uniqueId("c-none")).read(), 404);
  });

  test("a partition key path without a leading slash is refused with 400", async () => {
    const id = uniqueId("c-bad");
    await expectStatus(database.containers.create({ id, partitionKey: { paths: ["pk"] } }), 400);
    await expectStatus(database.container(id).read(), 404);
  });

  test("a hierarchical key path without a leading slash is refused with 400", async () => {
    const id = uniqueId("c-bad-hier");
    const partitionKey = { paths: ["/tenant", "user"], kind: "MultiHash", version: 2 };
    await expectStatus(database.containers.create({ id, partitionKey }), 400);
  });
});
