// Transactional batch (items.batch: all operations of one logical partition commit together or
// not at all) and bulk (items.executeBulkOperations and the older items.bulk: independent
// operations over many partition keys).

import assert from "node:assert/strict";
import { before, test } from "node:test";

import { suite, uniqueId } from "../lib/harness.js";

suite("batch", (ctx) => {
  let container; // partition key /pk, 4 physical partitions
  before(async () => {
    const { database } = await ctx.client.databases.create({ id: uniqueId("db-batch") });
    ({ container } = await database.containers.create({
      id: "batch",
      partitionKey: { paths: ["/pk"] },
      throughput: 20000,
    }));
  });

  // ---- transactional batch ------------------------------------------------------------------

  test("a batch of Create, Upsert, Read, Replace, Delete and Patch commits", async () => {
    const pk = uniqueId("b");
    for (const id of ["replace-me", "delete-me", "patch-me", "read-me"]) {
      await container.items.create({ id, pk, v: 0 });
    }
    const response = await container.items.batch(
      [
        { operationType: "Create", resourceBody: { id: "new", pk, v: 1 } },
        { operationType: "Upsert", resourceBody: { id: "upserted", pk, v: 2 } },
        { operationType: "Read", id: "read-me" },
        { operationType: "Replace", id: "replace-me", resourceBody: { id: "replace-me", pk, v: 3 } },
        { operationType: "Delete", id: "delete-me" },
        {
          operationType: "Patch",
          id: "patch-me",
          resourceBody: { operations: [{ op: "incr", path: "/v", value: 5 }] },
        },
        { operationType: "Read", id: "new" }, // sees the batch's own create
      ],
      pk,
    );
    assert.equal(response.code, 200);
    assert.deepEqual(
      response.result.map((r) => r.statusCode),
      [201, 201, 200, 200, 204, 200, 200],
      JSON.stringify(response.result),
    );
    for (const r of response.result) assert.equal(typeof r.requestCharge, "number");
    assert.equal(response.result[2].resourceBody?.id, "read-me");
    assert.equal(response.result[5].resourceBody?.v, 5);
    assert.equal(response.result[6].resourceBody?.v, 1);
    assert.equal(typeof response.result[0].eTag, "string");

    const read = async (id) => (await container.item(id, pk).read()).resource;
    assert.equal((await read("new")).v, 1);
    assert.equal((await read("upserted")).v, 2);
    assert.equal((await read("replace-me")).v, 3);
    assert.equal(await read("delete-me"), undefined);
    assert.equal((await read("patch-me")).v, 5);
  });

  test("a batch with a failing operation reports it, 424 for the others, and applies nothing", async () => {
    const pk = uniqueId("b");
    await container.items.create({ id: "exists", pk, v: 0 });
    await container.items.create({ id: "victim", pk, v: 0 });
    const response = await container.items.batch(
      [
        { operationType: "Create", resourceBody: { id: "first", pk, v: 1 } },
        { operationType: "Replace", id: "victim", resourceBody: { id: "victim", pk, v: 1 } },
        { operationType: "Create", resourceBody: { id: "exists", pk, v: 1 } }, // 409
        { operationType: "Delete", id: "victim" },
      ],
      pk,
    );
    assert.deepEqual(
      response.result.map((r) => r.statusCode),
      [424, 424, 409, 424],
      JSON.stringify(response.result),
    );
    assert.equal(response.code, 207, "a failed batch comes back as 207 Multi-Status");

    assert.equal((await container.item("first", pk).read()).statusCode, 404);
    assert.equal((await container.item("victim", pk).read()).resource.v, 0);
    assert.equal((await container.item("exists", pk).read()).resource.v, 0);
  });

  test("a batch whose Delete of a missing item fails rolls back the upsert before it", async () => {
    const pk = uniqueId("b");
    const response = await container.items.batch(
      [
        { operationType: "Upsert", resourceBody: { id: "u", pk } },
        { operationType: "Delete", id: "missing" },
      ],
      pk,
    );
    assert.deepEqual(
      response.result.map((r) => r.statusCode),
      [424, 404],
    );
    assert.equal((await container.item("u", pk).read()).statusCode, 404);
  });

  test("a batch with a conditional Patch (a condition filter) commits", async () => {
    const pk = uniqueId("b");
    await container.items.create({ id: "cond", pk, v: 0 });
    const response = await container.items.batch(
      [
        { operationType: "Create", resourceBody: { id: "other", pk } },
        {
          operationType: "Patch",
          id: "cond",
          resourceBody: {
            condition: "FROM c WHERE NOT IS_DEFINED(c.flag)",
            operations: [{ op: "set", path: "/flag", value: true }],
          },
        },
      ],
      pk,
    );
    assert.deepEqual(
      response.result.map((r) => r.statusCode),
      [201, 200],
    );
    assert.equal((await container.item("cond", pk).read()).resource.flag, true);
  });

  // ---- bulk ---------------------------------------------------------------------------------

  test("executeBulkOperations: create, upsert, read, replace, patch, delete across partition keys", async () => {
    const prefix = uniqueId("bulk");
    const pks = Array.from({ length: 8 }, (_, i) => `${prefix}-k${i}`);
    // Existing items to upsert, read, replace, patch and delete. Bulk operations are
    // independent: none depends on another one's outcome.
    for (const pk of pks) {
      for (const id of ["old", "readme", "rep", "patched", "gone"]) await container.items.create({ id, pk, v: 0 });
    }
    // In 4.10 executeBulkOperations needs partitionKey on every operation, also on creates.
    const operations = pks.flatMap((pk) => [
      { operationType: "Create", resourceBody: { id: "c1", pk, v: 1 }, partitionKey: pk },
      { operationType: "Create", resourceBody: { id: "c2", pk, v: 2 }, partitionKey: pk },
      { operationType: "Upsert", resourceBody: { id: "old", pk, v: 9 }, partitionKey: pk },
      { operationType: "Read", id: "readme", partitionKey: pk },
      { operationType: "Replace", id: "rep", resourceBody: { id: "rep", pk, v: 22 }, partitionKey: pk },
      { operationType: "Patch", id: "patched", partitionKey: pk, resourceBody: [{ op: "set", path: "/v", value: 7 }] },
      { operationType: "Delete", id: "gone", partitionKey: pk },
    ]);
    const results = await container.items.executeBulkOperations(operations);
    assert.equal(results.length, operations.length);
    const statuses = results.map((r) => r.response?.statusCode ?? `error ${r.error?.code}: ${r.error?.message}`);
    assert.deepEqual(
      statuses,
      pks.flatMap(() => [201, 201, 200, 200, 200, 200, 204]),
    );
    // Results come back in the order of the operations.
    for (let i = 0; i < results.length; i++) {
      assert.equal(results[i].operationInput.operationType, operations[i].operationType);
      assert.equal(
        results[i].operationInput.id ?? results[i].operationInput.resourceBody.id,
        operations[i].id ?? operations[i].resourceBody.id,
      );
    }
    assert.equal(results[3].response.resourceBody?.id, "readme");

    const read = async (id, pk) => (await container.item(id, pk).read()).resource;
    for (const pk of pks) {
      assert.equal((await read("c1", pk)).v, 1);
      assert.equal((await read("c2", pk)).v, 2);
      assert.equal((await read("old", pk)).v, 9);
      assert.equal((await read("rep", pk)).v, 22);
      assert.equal((await read("patched", pk)).v, 7);
      assert.equal(await read("gone", pk), undefined);
    }
  });

  test("executeBulkOperations: a failing operation does not stop the others", async () => {
    const prefix = uniqueId("bulk");
    const [a, b] = [`${prefix}-a`, `${prefix}-b`];
    await container.items.create({ id: "dup", pk: a });
    const results = await container.items.executeBulkOperations([
      { operationType: "Create", resourceBody: { id: "dup", pk: a }, partitionKey: a }, // 409
      { operationType: "Create", resourceBody: { id: "fresh", pk: a }, partitionKey: a },
      { operationType: "Delete", id: "missing", partitionKey: b }, // 404
      { operationType: "Create", resourceBody: { id: "fresh", pk: b }, partitionKey: b },
    ]);
    const status = (r) => r.response?.statusCode ?? r.error?.code;
    assert.deepEqual(results.map(status), [409, 201, 404, 201]);
    assert.equal((await container.item("fresh", `${prefix}-a`).read()).statusCode, 200);
    assert.equal((await container.item("fresh", `${prefix}-b`).read()).statusCode, 200);
  });

  test(
    "executeBulkOperations: operations on one item in one request apply in order",
    async () => {
      // The SDK sends these four in one request (same partition key range, in this order);
      // Cosmos executes a bulk request's operations one after the other.
      const pk = uniqueId("bulk");
      const results = await container.items.executeBulkOperations([
        { operationType: "Create", resourceBody: { id: "x", pk, v: 1 }, partitionKey: pk },
        { operationType: "Replace", id: "x", resourceBody: { id: "x", pk, v: 2 }, partitionKey: pk },
        { operationType: "Read", id: "x", partitionKey: pk },
        { operationType: "Delete", id: "x", partitionKey: pk },
      ]);
      assert.deepEqual(
        results.map((r) => r.response?.statusCode ?? r.error?.code),
        [201, 200, 200, 204],
      );
      assert.equal(results[2].response.resourceBody.v, 2);
      assert.equal((await container.item("x", pk).read()).statusCode, 404);
    },
  );

  test("items.bulk (deprecated API): 60 creates over 12 partition keys, then deletes", async () => {
    const prefix = uniqueId("bulk");
    const items = Array.from({ length: 60 }, (_, i) => ({ id: `i${i}`, pk: `${prefix}-k${i % 12}`, i }));
    const created = await container.items.bulk(
      items.map((resourceBody) => ({ operationType: "Create", resourceBody })),
    );
    assert.deepEqual(
      created.map((r) => r.statusCode),
      items.map(() => 201),
    );
    const { resources } = await container.items
      .query({
        query: "SELECT VALUE COUNT(1) FROM c WHERE STARTSWITH(c.pk, @p)",
        parameters: [{ name: "@p", value: `${prefix}-` }],
      })
      .fetchAll();
    assert.deepEqual(resources, [60]);
    for (const it of items.filter((_, i) => i % 7 === 0)) {
      assert.equal((await container.item(it.id, it.pk).read()).resource.i, it.i);
    }
    const deleted = await container.items.bulk(
      items.map((it) => ({ operationType: "Delete", id: it.id, partitionKey: it.pk })),
    );
    assert.deepEqual(
      deleted.map((r) => r.statusCode),
      items.map(() => 204),
    );
    assert.equal((await container.item("i0", `${prefix}-k0`).read()).statusCode, 404);
  });
});
