// Patch: item.patch with set, incr, remove, add, replace and move, the array and the object
// ({ operations, condition }) forms, and failures that leave the item unchanged.

import assert from "node:assert/strict";
import { before, test } from "node:test";

import { expectStatus, suite, uniqueId } from "../lib/harness.js";

/** Drops the system properties so that bodies can be compared with what was written. */
function userProps(item) {
  return Object.fromEntries(Object.entries(item).filter(([k]) => !k.startsWith("_")));
}

suite("patch", (ctx) => {
  let container; // partition key /pk
  before(async () => {
    const { database } = await ctx.client.databases.create({ id: uniqueId("db-patch") });
    ({ container } = await database.containers.create({ id: "patch", partitionKey: { paths: ["/pk"] } }));
  });

  /** Creates a fresh item with the given extra properties; returns its id and created body. */
  async function newItem(props) {
    const id = uniqueId("p");
    const { resource } = await container.items.create({ id, pk: "p1", ...props });
    return { id, created: resource };
  }

  test("set, incr, remove and add (append to an array) in one patch", async () => {
    const { id, created } = await newItem({ count: 5, gone: "x", arr: [1, 2], keep: true });
    const patched = await container.item(id, "p1").patch([
      { op: "set", path: "/a", value: 1 },
      { op: "incr", path: "/count", value: 3 },
      { op: "remove", path: "/gone" },
      { op: "add", path: "/arr/-", value: 3 },
    ]);
    assert.equal(patched.statusCode, 200);
    assert.ok(patched.requestCharge > 0, `requestCharge ${patched.requestCharge}`);
    const expected = { id, pk: "p1", count: 8, arr: [1, 2, 3], keep: true, a: 1 };
    assert.deepEqual(userProps(patched.resource), expected);
    assert.notEqual(patched.resource._etag, created._etag);
    const read = await container.item(id, "p1").read();
    assert.deepEqual(userProps(read.resource), expected);
    assert.equal(read.resource._etag, patched.resource._etag);
  });

  test("the object form { operations } works like the array form", async () => {
    const { id } = await newItem({ n: 1 });
    const patched = await container.item(id, "p1").patch({
      operations: [
        { op: "set", path: "/n", value: 2 },
        { op: "set", path: "/nested", value: { x: [1] } },
      ],
    });
    assert.equal(patched.statusCode, 200);
    assert.deepEqual(userProps(patched.resource), { id, pk: "p1", n: 2, nested: { x: [1] } });
  });

  test("add and set on nested objects and array indexes; replace; incr by a negative fraction", async () => {
    const { id } = await newItem({ obj: { a: 1 }, arr: ["a", "b", "c"], f: 1.5 });
    const patched = await container.item(id, "p1").patch([
      { op: "add", path: "/obj/b", value: 2 }, // new property
      { op: "add", path: "/arr/1", value: "x" }, // insert at index 1
      { op: "set", path: "/arr/0", value: "A" }, // set on an array index replaces
      { op: "replace", path: "/obj/a", value: "one" },
      { op: "incr", path: "/f", value: -0.5 },
      { op: "incr", path: "/fresh", value: 7 }, // incr of a missing property creates it
    ]);
    assert.deepEqual(userProps(patched.resource), {
      id,
      pk: "p1",
      obj: { a: "one", b: 2 },
      arr: ["A", "x", "b", "c"],
      f: 1,
      fresh: 7,
    });
  });

  test("move moves a value from one path to another", async () => {
    const { id } = await newItem({ from: { v: 1 }, other: 2 });
    const patched = await container.item(id, "p1").patch([{ op: "move", from: "/from", path: "/to" }]);
    assert.deepEqual(userProps(patched.resource), { id, pk: "p1", other: 2, to: { v: 1 } });
  });

  test("a conditional patch applies when the condition holds, 412 when not", async () => {
    const { id } = await newItem({ state: "open", n: 0 });
    const ok = await container.item(id, "p1").patch({
      condition: "FROM c WHERE c.state = 'open'",
      operations: [{ op: "incr", path: "/n", value: 1 }],
    });
    assert.equal(ok.statusCode, 200);
    assert.equal(ok.resource.n, 1);
    await expectStatus(
      container.item(id, "p1").patch({
        condition: "FROM c WHERE c.state = 'closed'",
        operations: [{ op: "incr", path: "/n", value: 1 }],
      }),
      412,
    );
    assert.equal((await container.item(id, "p1").read()).resource.n, 1);
  });

  test("a conditional patch refuses a bad condition with 400 and needs If-Match to hold too", async () => {
    const { id, created } = await newItem({ state: "open", n: 0 });
    for (const condition of ["FROM c WHERE c.n >", "FROM c WHERE x.n = 0", "FROM c WHERE c.value = 1"]) {
      await expectStatus(
        container.item(id, "p1").patch({ condition, operations: [{ op: "incr", path: "/n", value: 1 }] }),
        400,
      );
    }
    await container.item(id, "p1").patch([{ op: "set", path: "/other", value: 1 }]);
    await expectStatus(
      container.item(id, "p1").patch(
        { condition: "FROM c WHERE c.n = 0", operations: [{ op: "incr", path: "/n", value: 1 }] },
        { accessCondition: { type: "IfMatch", condition: created._etag } },
      ),
      412,
    );
    assert.equal((await container.item(id, "p1").read()).resource.n, 0);
  });

  test("patch with a stale IfMatch etag gives 412", async () => {
    const { id, created } = await newItem({ n: 0 });
    await container.item(id, "p1").patch([{ op: "incr", path: "/n", value: 1 }]);
    await expectStatus(
      container
        .item(id, "p1")
        .patch([{ op: "incr", path: "/n", value: 1 }], {
          accessCondition: { type: "IfMatch", condition: created._etag },
        }),
      412,
    );
    assert.equal((await container.item(id, "p1").read()).resource.n, 1);
  });

  test("a failing operation (replace of a missing path) gives 400 and changes nothing", async () => {
    const { id, created } = await newItem({ n: 1 });
    const err = await expectStatus(
      container.item(id, "p1").patch([
        { op: "set", path: "/n", value: 2 }, // would succeed, but the patch is all or nothing
        { op: "replace", path: "/missing", value: 1 },
      ]),
      400,
    );
    assert.equal(typeof err.body?.message, "string");
    const read = await container.item(id, "p1").read();
    assert.deepEqual(userProps(read.resource), { id, pk: "p1", n: 1 });
    assert.equal(read.resource._etag, created._etag);
  });

  test("remove of a missing path and incr of a string give 400", async () => {
    const { id, created } = await newItem({ s: "text" });
    await expectStatus(container.item(id, "p1").patch([{ op: "remove", path: "/missing" }]), 400);
    await expectStatus(container.item(id, "p1").patch([{ op: "incr", path: "/s", value: 1 }]), 400);
    await expectStatus(container.item(id, "p1").patch([{ op: "add", path: "/no/such/parent", value: 1 }]), 400);
    assert.equal((await container.item(id, "p1").read()).resource._etag, created._etag);
  });

  test("more than 10 operations in one patch give 400", async () => {
    const { id, created } = await newItem({});
    const ops = Array.from({ length: 11 }, (_, i) => ({ op: "set", path: `/f${i}`, value: i }));
    await expectStatus(container.item(id, "p1").patch(ops), 400);
    assert.equal((await container.item(id, "p1").read()).resource._etag, created._etag);
  });

  test("patch of the partition key path gives 400", async () => {
    const { id } = await newItem({});
    await expectStatus(container.item(id, "p1").patch([{ op: "set", path: "/pk", value: "p2" }]), 400);
    assert.equal((await container.item(id, "p1").read()).statusCode, 200);
  });

  test("patch of a missing item gives 404", async () => {
    await expectStatus(container.item(uniqueId("missing"), "p1").patch([{ op: "set", path: "/a", value: 1 }]), 404);
  });
});
