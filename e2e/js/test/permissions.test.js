// Fine-grained access: users and permissions made with the account key (create, read, list,
// query, replace, upsert, delete), and clients that hold only the resource tokens those
// permissions issue, through the SDK's `resourceTokens` and `permissionFeed` options. A token
// reaches its container (or one partition key of it) with its mode, and nothing else: other
// containers, other partition keys, writes under a Read permission and changes to the catalog
// are refused with 403; a deleted permission's token with 401; an expired one with 403.

import assert from "node:assert/strict";
import { before, test } from "node:test";

import { ChangeFeedStartFrom } from "@azure/cosmos";

import { disposeClient, expectStatus, newClient, suite } from "../lib/harness.js";

const DB = "perm-db";
const C = `dbs/${DB}/colls/c`;

/** A client that holds tokens and no key; options are resourceTokens or permissionFeed. */
function tokenClient(ctx, options) {
  const client = newClient(ctx.server, { key: undefined, ...options });
  ctx.clients.push(client);
  return client;
}

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

suite("permissions", (ctx) => {
  ctx.clients = [];
  const perms = {};
  let shortIssued;

  before(async () => {
    const { database } = await ctx.client.databases.create({ id: DB });
    for (const id of ["c", "c2"]) {
      const { container } = await database.containers.create({ id, partitionKey: { paths: ["/pk"] } });
      for (const pk of ["a", "b"]) await container.items.create({ id: `${pk}1`, pk });
    }
    const { user: alice } = await database.users.create({ id: "alice" });
    const { user: bob } = await database.users.create({ id: "bob" });
    const { user: dave } = await database.users.create({ id: "dave" });
    // A token that expires soon, taken first so that the other tests run while it ages.
    shortIssued = Date.now();
    perms.short = (
      await dave.permissions.create(
        { id: "short", permissionMode: "read", resource: C, resourcePartitionKey: ["a"] },
        { resourceTokenExpirySeconds: 10 },
      )
    ).resource;
    perms.allC = (await alice.permissions.create({ id: "all-c", permissionMode: "all", resource: C })).resource;
    perms.readC2 = (
      await alice.permissions.create({ id: "read-c2", permissionMode: "read", resource: `dbs/${DB}/colls/c2` })
    ).resource;
    perms.onlyA = (
      await bob.permissions.create({ id: "only-a", permissionMode: "all", resource: C, resourcePartitionKey: ["a"] })
    ).resource;
  });

  test("users and permissions are resources of the database", async () => {
    const database = ctx.client.database(DB);
    const { resources: users } = await database.users.readAll().fetchAll();
    assert.deepEqual(users.map((u) => u.id).sort(), ["alice", "bob", "dave"]);
    const { resources: found } = await database.users
      .query({ query: "SELECT * FROM u WHERE u.id = @id", parameters: [{ name: "@id", value: "bob" }] })
      .fetchAll();
    assert.equal(found.length, 1);

    const { resource: allC } = await database.user("alice").permission("all-c").read({ resourceTokenExpirySeconds: 600 });
    assert.equal(allC.permissionMode, "All");
    assert.equal(allC.resource, C);
    assert.equal(allC._rid, perms.allC._rid);
    assert.match(allC._token, /^type=resource&ver=1\.0&sig=/);
    assert.notEqual(allC._token, perms.allC._token, "a read issues a new token, valid for as long as it asks");
    assert.deepEqual(perms.onlyA.resourcePartitionKey, ["a"]);

    const { resources: list } = await database.user("alice").permissions.readAll().fetchAll();
    assert.deepEqual(list.map((p) => p.id), ["all-c", "read-c2"]);
    assert.ok(list.every((p) => p._token), "a listed permission has no token");

    // A user has one permission per resource (and partition key).
    await expectStatus(
      database.user("alice").permissions.create({ id: "again", permissionMode: "read", resource: C }),
      409,
    );
    await expectStatus(
      database.user("alice").permissions.create({ id: "nowhere", permissionMode: "read", resource: `dbs/${DB}/colls/nope` }),
      404,
    );
    await expectStatus(
      database.user("alice").permissions.create({ id: "bad", permissionMode: "none", resource: `dbs/${DB}/colls/c2` }),
      400,
    );
    await expectStatus(
      database.user("alice").permission("all-c").read({ resourceTokenExpirySeconds: 18001 }),
      400,
    );

    // Upsert, replace and delete, on a user of their own.
    const { user: carol } = await database.users.upsert({ id: "carol" });
    await carol.permissions.upsert({ id: "p", permissionMode: "read", resource: C });
    const { resource: replaced } = await carol
      .permission("p")
      .replace({ id: "p", permissionMode: "all", resource: `dbs/${DB}/colls/c2` });
    assert.equal(replaced.permissionMode, "All");
    assert.equal(replaced.resource, `dbs/${DB}/colls/c2`);
    await carol.permission("p").delete();
    await expectStatus(carol.permission("p").read(), 404);
    await carol.delete();
    await expectStatus(database.user("carol").read(), 404);
  });

  test("resourceTokens: a container's token reads and writes its items, and nothing else", async () => {
    const client = tokenClient(ctx, { resourceTokens: { [C]: perms.allC._token } });
    const container = client.database(DB).container("c");
    const { resource: account } = await client.getDatabaseAccount();
    assert.ok(account, "the account read with a token");
    const { resource: def } = await container.read();
    assert.equal(def.id, "c");

    const { resource: a1 } = await container.item("a1", "a").read();
    assert.equal(a1.pk, "a");
    await container.items.create({ id: "t1", pk: "b" });
    await container.items.upsert({ id: "t1", pk: "b", v: 2 });
    await container.item("t1", "b").replace({ id: "t1", pk: "b", v: 3 });
    await container.item("t1", "b").patch([{ op: "incr", path: "/v", value: 1 }]);
    const { resources: all } = await container.items.query("SELECT c.id FROM c").fetchAll();
    assert.deepEqual(all.map((d) => d.id).sort(), ["a1", "b1", "t1"]);
    const batch = await container.items.batch([{ operationType: "Create", resourceBody: { id: "t2", pk: "b" } }], "b");
    assert.equal(batch.result[0].statusCode, 201);
    await container.item("t1", "b").delete();
    await container.item("t2", "b").delete();

    // Other containers, and the catalog, are out of its reach. The SDK sends a token only for
    // paths it was given one for (else the header "null", which the server refuses with 401);
    // a client that offers the container's token for the whole database shows that the server
    // refuses it there (403).
    await expectStatus(client.database(DB).container("c2").item("a1", "a").read(), 401);
    const pushy = tokenClient(ctx, { resourceTokens: { [C]: perms.allC._token, [DB]: perms.allC._token } });
    const database = pushy.database(DB);
    await expectStatus(database.container("c2").item("a1", "a").read(), 403);
    await expectStatus(database.container("c2").items.create({ id: "t3", pk: "a" }), 403);
    await expectStatus(database.container("c2").read(), 403);
    await expectStatus(database.read(), 403);
    await expectStatus(database.containers.create({ id: "new", partitionKey: { paths: ["/pk"] } }), 403);
    await expectStatus(database.users.create({ id: "mallory" }), 403);
    await expectStatus(database.user("alice").permission("all-c").read(), 403);
    await expectStatus(database.container("c").delete(), 403);
    await expectStatus(database.container("c").scripts.storedProcedures.create({ id: "s", body: "function s() {}" }), 403);
    const { statusCode } = await ctx.client.database(DB).container("c2").item("t3", "a").read();
    assert.equal(statusCode, 404);
    await ctx.client.database(DB).user("mallory").read().then(
      () => assert.fail("the token created a user"),
      (err) => assert.equal(err.code, 404),
    );
  });

  test("permissionFeed: each container with its own token and mode", async () => {
    const client = tokenClient(ctx, { permissionFeed: [perms.allC, perms.readC2] });
    const database = client.database(DB);
    await database.container("c").items.create({ id: "f1", pk: "a" });
    const { resource } = await database.container("c2").item("b1", "b").read();
    assert.equal(resource.id, "b1");
    const { resources } = await database.container("c2").items.query("SELECT * FROM c").fetchAll();
    assert.equal(resources.length, 2);
    // c2's permission is Read: every write is refused, and changes nothing.
    await expectStatus(database.container("c2").items.create({ id: "f2", pk: "a" }), 403);
    await expectStatus(database.container("c2").item("b1", "b").delete(), 403);
    await expectStatus(database.container("c2").item("b1", "b").replace({ id: "b1", pk: "b", v: 1 }), 403);
    assert.equal((await ctx.client.database(DB).container("c2").item("f2", "a").read()).statusCode, 404);
    await database.container("c").item("f1", "a").delete();
  });

  test("a partition key's token reaches that key only", async () => {
    const client = tokenClient(ctx, { resourceTokens: { [C]: perms.onlyA._token } });
    const container = client.database(DB).container("c");
    await container.item("a1", "a").read();
    await container.items.create({ id: "k1", pk: "a" });
    const { resources } = await container.items.query("SELECT c.id FROM c", { partitionKey: "a" }).fetchAll();
    assert.deepEqual(resources.map((d) => d.id).sort(), ["a1", "k1"]);
    const iterator = container.items.getChangeFeedIterator({ changeFeedStartFrom: ChangeFeedStartFrom.Beginning("a") });
    const page = await iterator.readNext();
    assert.equal(page.statusCode, 200);
    assert.ok(page.result.every((d) => d.pk === "a"), "the change feed read another key");
    const batch = await container.items.batch([{ operationType: "Read", id: "k1" }], "a");
    assert.equal(batch.result[0].statusCode, 200);

    await expectStatus(container.item("b1", "b").read(), 403);
    await expectStatus(container.items.create({ id: "k2", pk: "b" }), 403);
    // The SDK wraps a refused batch in an error of its own, whose cause is the answer.
    await container.items.batch([{ operationType: "Create", resourceBody: { id: "k3", pk: "b" } }], "b").then(
      () => assert.fail("a batch on another key succeeded"),
      (err) => assert.equal(err.cause?.code, 403, String(err)),
    );
    await expectStatus(container.items.query("SELECT * FROM c").fetchAll(), 403);
    await expectStatus(container.items.readAll().fetchAll(), 403);
    assert.equal((await ctx.client.database(DB).container("c").item("k2", "b").read()).statusCode, 404);
    await container.item("k1", "a").delete();
  });

  test("a deleted permission's token is refused", async () => {
    const database = ctx.client.database(DB);
    const { resource: temp } = await database
      .user("alice")
      .permissions.create({ id: "temp", permissionMode: "read", resource: C, resourcePartitionKey: ["b"] });
    const client = tokenClient(ctx, { permissionFeed: [temp] });
    await client.database(DB).container("c").item("b1", "b").read();
    await database.user("alice").permission("temp").delete();
    await expectStatus(client.database(DB).container("c").item("b1", "b").read(), 401);
  });

  test("a token expires", async () => {
    const client = tokenClient(ctx, { resourceTokens: { [C]: perms.short._token } });
    const item = client.database(DB).container("c").item("a1", "a");
    await item.read();
    await sleep(Math.max(0, shortIssued + 11_000 - Date.now()));
    const err = await expectStatus(item.read(), 403);
    assert.match(err.message, /not valid at the current time/);
    // A fresh read of the permission issues a fresh token.
    const { resource } = await ctx.client.database(DB).user("dave").permission("short").read();
    const renewed = tokenClient(ctx, { resourceTokens: { [C]: resource._token } });
    await renewed.database(DB).container("c").item("a1", "a").read();
  });

  test("dispose the token clients", () => {
    for (const client of ctx.clients.splice(0)) disposeClient(client);
  });
});
