// Unique keys: a container created with a uniqueKeyPolicy returns it, refuses a second item of
// a logical partition with the same values (409), lets other logical partitions reuse them, and
// keeps the policy across a container replace.

import assert from "node:assert/strict";
import { before, test } from "node:test";

import { expectStatus, suite, uniqueId } from "../lib/harness.js";

suite("unique keys", (ctx) => {
  let database;
  let container; // partition key /company; unique /email and /first+/last
  const uniqueKeyPolicy = { uniqueKeys: [{ paths: ["/email"] }, { paths: ["/first", "/last"] }] };
  before(async () => {
    ({ database } = await ctx.client.databases.create({ id: uniqueId("db-unique") }));
    ({ container } = await database.containers.create({
      id: "users",
      partitionKey: { paths: ["/company"] },
      uniqueKeyPolicy,
    }));
  });

  test("the policy comes back with the container; none is an empty list", async () => {
    const { resource } = await container.read();
    assert.deepEqual(resource.uniqueKeyPolicy, uniqueKeyPolicy);
    const plain = await database.containers.create({ id: uniqueId("plain"), partitionKey: { paths: ["/pk"] } });
    assert.deepEqual(plain.resource.uniqueKeyPolicy, { uniqueKeys: [] });
  });

  test("a duplicate in one logical partition is refused with 409; another may reuse it", async () => {
    const company = uniqueId("co");
    await container.items.create({ id: "1", company, email: "gaby@x", first: "Gaby", last: "Duperre" });
    await expectStatus(container.items.create({ id: "2", company, email: "gaby@x", first: "Ivan", last: "Duperre" }), 409);
    await expectStatus(container.items.upsert({ id: "2", company, email: "ivan@x", first: "Gaby", last: "Duperre" }), 409);
    await container.items.create({ id: "2", company, email: "ivan@x", first: "Ivan", last: "Duperre" });
    await expectStatus(
      container.item("2", company).replace({ id: "2", company, email: "gaby@x", first: "Ivan", last: "Duperre" }),
      409,
    );
    await expectStatus(container.item("2", company).patch([{ op: "set", path: "/first", value: "Gaby" }]), 409);
    const other = uniqueId("co");
    const created = await container.items.create({ id: "1", company: other, email: "gaby@x", first: "Gaby", last: "Duperre" });
    assert.equal(created.statusCode, 201);
  });

  test("a batch with a duplicate fails as a whole at the duplicate", async () => {
    const company = uniqueId("co");
    const response = await container.items.batch(
      [
        { operationType: "Create", resourceBody: { id: "a", company, email: "same@x", first: "A" } },
        { operationType: "Create", resourceBody: { id: "b", company, email: "same@x", first: "B" } },
      ],
      company,
    );
    assert.deepEqual(
      response.result.map((r) => r.statusCode),
      [424, 409],
      JSON.stringify(response.result),
    );
    assert.equal((await container.item("a", company).read()).resource, undefined);
  });

  test("a replace keeps the policy; changing it is refused with 400", async () => {
    const { resource } = await container.read();
    const same = await container.replace(resource);
    assert.deepEqual(same.resource.uniqueKeyPolicy, uniqueKeyPolicy);
    await expectStatus(container.replace({ ...resource, uniqueKeyPolicy: { uniqueKeys: [{ paths: ["/email"] }] } }), 400);
  });

  test("an invalid policy is refused with 400", async () => {
    await expectStatus(
      database.containers.create({
        id: uniqueId("bad"),
        partitionKey: { paths: ["/pk"] },
        uniqueKeyPolicy: { uniqueKeys: [{ paths: ["/a", "/a"] }] },
      }),
      400,
    );
  });
});
