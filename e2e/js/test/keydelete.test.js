// Delete by partition key: container.deleteAllItemsForPartitionKey removes every item of one
// logical partition at once for reads (the rest is deleted in the background), as does the
// same request signed as the .NET, Java and Python SDKs sign it.

import assert from "node:assert/strict";
import { before, after, test } from "node:test";

import { disposeClient, newClient, rawRequest, suite, uniqueId } from "../lib/harness.js";

suite("keydelete", (ctx) => {
  let client, container, nested;
  before(async () => {
    client = newClient(ctx.server);
    const { database } = await client.databases.create({ id: uniqueId("db-keydelete") });
    ({ container } = await database.containers.create({ id: uniqueId("c"), partitionKey: { paths: ["/pk"] } }));
    ({ container: nested } = await database.containers.create({
      id: uniqueId("h"), partitionKey: { paths: ["/t", "/u"], kind: "MultiHash", version: 2 },
    }));
  });
  after(() => disposeClient(client));

  const ids = async (c, pk) => {
    const { resources } = await c.items.query("SELECT VALUE c.id FROM c", pk === undefined ? {} : { partitionKey: pk }).fetchAll();
    return resources.sort();
  };

  test("the SDK's deleteAllItemsForPartitionKey", async () => {
    for (let i = 0; i < 30; i++) await container.items.create({ id: `a${i}`, pk: "gone" });
    await container.items.create({ id: "b", pk: "kept" });
    const res = await container.deleteAllItemsForPartitionKey("gone");
    assert.equal(res.statusCode, 200);
    assert.deepEqual(await ids(container, "gone"), []);
    assert.deepEqual(await ids(container), ["b"]);
    const read = await container.item("a3", "gone").read();
    assert.equal(read.statusCode, 404);
    // The id is free again at once.
    const { statusCode } = await container.items.create({ id: "a3", pk: "gone" });
    assert.equal(statusCode, 201);
    assert.deepEqual(await ids(container, "gone"), ["a3"]);
  });

  test("signed as the other SDKs sign it, and refused for a partial hierarchical key", async () => {
    await nested.items.create({ id: "x", t: "a", u: "b" });
    await nested.items.create({ id: "y", t: "a", u: "c" });
    const path = `/dbs/${nested.database.id}/colls/${nested.id}/operations/partitionkeydelete`;
    const sign = { type: "partitionkey", link: `dbs/${nested.database.id}/colls/${nested.id}` };
    const partial = await rawRequest(ctx.server, { method: "POST", path, sign, headers: { "x-ms-documentdb-partitionkey": '["a"]' } });
    assert.equal(partial.status, 400);
    const whole = await rawRequest(ctx.server, { method: "POST", path, sign, headers: { "x-ms-documentdb-partitionkey": '["a","b"]' } });
    assert.equal(whole.status, 200);
    assert.deepEqual(await ids(nested), ["y"]);
    const unsigned = await rawRequest(ctx.server, {
      method: "POST", path, sign: { type: "docs", link: sign.link }, headers: { "x-ms-documentdb-partitionkey": '["a","c"]' },
    });
    assert.equal(unsigned.status, 401);
    assert.deepEqual(await ids(nested), ["y"]);
  });
});
