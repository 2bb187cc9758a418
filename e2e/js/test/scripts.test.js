// Server-side JavaScript: stored procedures, pre- and post-triggers and user-defined functions
// as resources (create, read, replace, list, query, delete), stored procedures run as one
// transaction over one logical partition (bulk import and a query-and-update loop that resume
// across calls, rollback on a throw or abort, reads of the transaction's own writes, the
// other-partition refusal), triggers around item writes, UDFs in queries, script logging, and
// runaway scripts (time, memory, recursion) stopped without harm to the server.
//
// The script bodies are JavaScript functions here: the SDK sends their source text
// (Function.prototype.toString) as the resource's body. They run on the server, never in Node.

import assert from "node:assert/strict";
import { before, test } from "node:test";

import { expectStatus, suite, uniqueId } from "../lib/harness.js";

const SCRIPT_EXCEPTION = "Encountered exception while executing function. Exception = ";
const OTHER_PARTITION =
  "Requests originating from scripts cannot reference partition keys other than the one for which client request was submitted.";

// ---- script bodies -------------------------------------------------------------------------

function helloWorld() {
  getContext().getResponse().setBody("Hello, World");
}

// Creates the documents it is given one after the other, each from the callback of the one
// before. When the server stops accepting operations (the call's operation quota or most of
// its time is spent) it returns how many it created; the caller sends the rest again.
function bulkImport(docs) {
  const collection = getContext().getCollection();
  const response = getContext().getResponse();
  let created = 0;
  if (!docs || docs.length === 0) {
    response.setBody(0);
    return;
  }
  createNext();

  function createNext() {
    const accepted = collection.createDocument(collection.getSelfLink(), docs[created], onCreated);
    if (!accepted) response.setBody(created);
  }
  function onCreated(err) {
    if (err) throw err;
    created++;
    if (created === docs.length) response.setBody(created);
    else createNext();
  }
}

// Marks every document of the partition that has no `updates` yet, a page at a time: it sets
// updates to 1 and `marked` to the tag it is given. It returns { continuation, updated }: a
// continuation when it stopped before the end (an operation was not accepted), to be passed
// back in the next call. A page cut short is asked for again from its own start; the filter
// leaves out the documents already marked, so none is marked twice.
function markAll(tag, continuation) {
  const collection = getContext().getCollection();
  const response = getContext().getResponse();
  const query = "SELECT * FROM c WHERE NOT IS_DEFINED(c.updates)";
  let updated = 0;
  readPage(continuation);

  function readPage(token) {
    const accepted = collection.queryDocuments(
      collection.getSelfLink(),
      query,
      { pageSize: 100, continuation: token },
      (err, docs, info) => {
        if (err) throw err;
        markFrom(docs, 0, token, info.continuation);
      },
    );
    if (!accepted) response.setBody({ continuation: token, updated });
  }
  function markFrom(docs, i, pageToken, nextToken) {
    if (i === docs.length) {
      if (nextToken) readPage(nextToken);
      else response.setBody({ updated });
      return;
    }
    const doc = docs[i];
    doc.updates = 1;
    doc.marked = tag;
    const accepted = collection.replaceDocument(doc._self, doc, { etag: doc._etag }, (err) => {
      if (err) throw err;
      updated++;
      markFrom(docs, i + 1, pageToken, nextToken);
    });
    if (!accepted) response.setBody({ continuation: pageToken, updated });
  }
}

// Stamps an item being created with the server's time, unless it has one.
function stampCreatedAt() {
  const request = getContext().getRequest();
  const item = request.getBody();
  if (!("createdAt" in item)) item.createdAt = Date.now();
  request.setBody(item);
}

// Writes an audit document for the item just written, in the item's logical partition and in
// the same transaction as the write.
function auditWrite() {
  const collection = getContext().getCollection();
  const request = getContext().getRequest();
  const item = getContext().getResponse().getBody();
  const audit = { id: `audit-${item.id}`, pk: item.pk, kind: "audit", of: item.id, op: request.getOperationType() };
  const accepted = collection.upsertDocument(collection.getSelfLink(), audit, (err) => {
    if (err) throw err;
  });
  if (!accepted) throw new Error("the audit document was not accepted");
}

// Writes an audit document, then refuses the write: neither the item nor the audit stays.
function refuseWrite() {
  const collection = getContext().getCollection();
  const item = getContext().getResponse().getBody();
  collection.createDocument(collection.getSelfLink(), { id: `refused-${item.id}`, pk: item.pk }, (err) => {
    if (err) throw err;
    throw new Error(`refused ${item.id}`);
  });
}

// ---- helpers -------------------------------------------------------------------------------

/** The documents of one logical partition, by query. */
async function partitionDocs(container, pk) {
  const { resources } = await container.items.query("SELECT * FROM c", { partitionKey: pk }).fetchAll();
  return resources;
}

/** Runs the bulk import procedure until every document is in; returns each call's count. */
async function importAll(container, pk, docs) {
  const counts = [];
  let rest = docs;
  while (rest.length > 0) {
    if (counts.length > 20) throw new Error(`bulk import is not progressing: ${counts}`);
    const { resource: created } = await container.scripts.storedProcedure("bulkImport").execute(pk, [rest]);
    counts.push(created);
    rest = rest.slice(created);
  }
  return counts;
}

suite("scripts", (ctx) => {
  let database;
  let container; // partition key /pk, 20000 RU/s: 4 physical partitions
  before(async () => {
    ({ database } = await ctx.client.databases.create({ id: uniqueId("db-scripts") }));
    ({ container } = await database.containers.create({
      id: "scripts",
      partitionKey: { paths: ["/pk"] },
      throughput: 20000,
    }));
    const sprocs = container.scripts.storedProcedures;
    await sprocs.create({ id: "helloWorld", body: helloWorld });
    await sprocs.create({ id: "bulkImport", body: bulkImport });
    await sprocs.create({ id: "markAll", body: markAll });
    const triggers = container.scripts.triggers;
    await triggers.create({
      id: "stampCreatedAt",
      body: stampCreatedAt,
      triggerType: "Pre",
      triggerOperation: "Create",
    });
    await triggers.create({ id: "auditWrite", body: auditWrite, triggerType: "Post", triggerOperation: "All" });
    await triggers.create({ id: "refuseWrite", body: refuseWrite, triggerType: "Post", triggerOperation: "All" });
  });

  // ---- resources ----------------------------------------------------------------------------

  test("stored procedures: create, read, replace with a new etag, list, query, delete; 409 and 404", async () => {
    const id = uniqueId("sp");
    const body = "function () { getContext().getResponse().setBody(1); }";
    const created = await container.scripts.storedProcedures.create({ id, body });
    assert.equal(created.statusCode, 201);
    assert.equal(created.resource.id, id);
    assert.equal(created.resource.body, body);
    for (const p of ["_rid", "_self", "_etag"]) assert.equal(typeof created.resource[p], "string", p);
    assert.equal(created.etag, created.resource._etag);

    const sproc = container.scripts.storedProcedure(id);
    const read = await sproc.read();
    assert.equal(read.statusCode, 200);
    assert.deepEqual(read.resource, created.resource);

    await expectStatus(container.scripts.storedProcedures.create({ id, body }), 409);

    const replaced = await sproc.replace({ id, body: body.replace("1", "2") });
    assert.equal(replaced.statusCode, 200);
    assert.notEqual(replaced.resource._etag, created.resource._etag);
    assert.equal(replaced.resource._rid, created.resource._rid);
    assert.equal((await sproc.execute("any", [])).resource, 2);

    const { resources: all } = await container.scripts.storedProcedures.readAll().fetchAll();
    assert.deepEqual(
      all.map((s) => s.id),
      ["helloWorld", "bulkImport", "markAll", id],
      "listed in creation order",
    );
    const { resources: found } = await container.scripts.storedProcedures
      .query({ query: "SELECT s.id, s.body FROM s WHERE s.id = @id", parameters: [{ name: "@id", value: id }] })
      .fetchAll();
    assert.deepEqual(found, [{ id, body: body.replace("1", "2") }]);

    assert.equal((await sproc.delete()).statusCode, 204);
    await expectStatus(sproc.read(), 404);
    await expectStatus(sproc.execute("any", []), 404);
    await expectStatus(sproc.delete(), 404);
  });

  test("triggers: create, read, replace with a new etag, list, query, delete; 409 and 404", async () => {
    const id = uniqueId("tr");
    const body = "function () {}";
    // The JavaScript SDK's enums are lower case ("pre", "create"); the server answers in
    // Cosmos's spelling.
    const created = await container.scripts.triggers.create({
      id,
      body,
      triggerType: "pre",
      triggerOperation: "create",
    });
    assert.equal(created.statusCode, 201);
    assert.equal(created.resource.triggerType, "Pre");
    assert.equal(created.resource.triggerOperation, "Create");

    const trigger = container.scripts.trigger(id);
    assert.deepEqual((await trigger.read()).resource, created.resource);
    await expectStatus(
      container.scripts.triggers.create({ id, body, triggerType: "Pre", triggerOperation: "All" }),
      409,
    );

    const replaced = await trigger.replace({ id, body, triggerType: "Post", triggerOperation: "Delete" });
    assert.notEqual(replaced.resource._etag, created.resource._etag);
    assert.equal(replaced.resource.triggerType, "Post");
    assert.equal(replaced.resource.triggerOperation, "Delete");

    const { resources: all } = await container.scripts.triggers.readAll().fetchAll();
    assert.deepEqual(
      all.map((t) => t.id),
      ["stampCreatedAt", "auditWrite", "refuseWrite", id],
    );
    const { resources: posts } = await container.scripts.triggers
      .query("SELECT VALUE t.id FROM t WHERE t.triggerType = 'Post' AND t.triggerOperation = 'Delete'")
      .fetchAll();
    assert.deepEqual(posts, [id]);

    await trigger.delete();
    await expectStatus(trigger.read(), 404);
    await expectStatus(container.items.create({ id: "x", pk: uniqueId("p") }, { preTriggerInclude: [id] }), 404);
  });

  test("user-defined functions: create, read, replace with a new etag, list, query, delete; 409 and 404", async () => {
    const id = "plusOne"; // a UDF's id is a name in queries (udf.plusOne): no "-"
    const created = await container.scripts.userDefinedFunctions.create({ id, body: "function (x) { return x + 1; }" });
    assert.equal(created.statusCode, 201);
    const udf = container.scripts.userDefinedFunction(id);
    assert.deepEqual((await udf.read()).resource, created.resource);
    await expectStatus(container.scripts.userDefinedFunctions.create({ id, body: "function (x) { return x; }" }), 409);

    const pk = uniqueId("p");
    await container.items.create({ id: "one", pk, n: 1 });
    const run = async () =>
      (await container.items.query(`SELECT VALUE udf.${id}(c.n) FROM c`, { partitionKey: pk }).fetchAll()).resources;
    assert.deepEqual(await run(), [2]);
    const replaced = await udf.replace({ id, body: "function (x) { return x + 10; }" });
    assert.notEqual(replaced.resource._etag, created.resource._etag);
    assert.deepEqual(await run(), [11], "a query uses the replaced body");

    const { resources: all } = await container.scripts.userDefinedFunctions.readAll().fetchAll();
    assert.ok(all.some((u) => u.id === id));
    const { resources: found } = await container.scripts.userDefinedFunctions
      .query({ query: "SELECT VALUE u.body FROM u WHERE u.id = @id", parameters: [{ name: "@id", value: id }] })
      .fetchAll();
    assert.deepEqual(found, ["function (x) { return x + 10; }"]);

    await udf.delete();
    await expectStatus(udf.read(), 404);
    await expectStatus(
      container.items.query(`SELECT VALUE udf.${id}(c.n) FROM c`, { partitionKey: pk }).fetchAll(),
      400,
    );
  });

  test("a body that is not JavaScript is refused with 400 at create and at replace; nothing is kept", async () => {
    const id = uniqueId("bad");
    const err = await expectStatus(container.scripts.storedProcedures.create({ id, body: "function ( {" }), 400);
    assert.match(err.message, /Encountered exception while compiling Javascript\. Exception = SyntaxError/);
    await expectStatus(container.scripts.storedProcedure(id).read(), 404);
    await expectStatus(
      container.scripts.triggers.create({
        id,
        body: "function () { return }}",
        triggerType: "Pre",
        triggerOperation: "All",
      }),
      400,
    );
    await expectStatus(
      container.scripts.userDefinedFunctions.create({ id, body: "function (x) { return x +; }" }),
      400,
    );

    await container.scripts.storedProcedures.create({ id, body: "function () {}" });
    await expectStatus(container.scripts.storedProcedure(id).replace({ id, body: "function () { var }" }), 400);
    assert.equal((await container.scripts.storedProcedure(id).read()).resource.body, "function () {}");
  });

  // ---- stored procedures --------------------------------------------------------------------

  test("hello world: the body the procedure sets is the result; the charge is reported", async () => {
    const response = await container.scripts.storedProcedure("helloWorld").execute(uniqueId("p"));
    assert.equal(response.statusCode, 200);
    assert.equal(response.resource, "Hello, World");
    assert.ok(response.requestCharge > 0, `charge ${response.requestCharge}`);
    assert.ok(Number(response.headers["x-ms-request-charge"]) > 0);
  });

  test("arguments arrive as JSON values; a procedure that sets no body returns null", async () => {
    const id = uniqueId("echo");
    await container.scripts.storedProcedures.create({
      id,
      body: function (a, b, c) {
        getContext().getResponse().setBody({ a, b, c, n: arguments.length });
      },
    });
    const pk = uniqueId("p");
    const { resource } = await container.scripts.storedProcedure(id).execute(pk, ["text", { x: [1, null] }, 2.5]);
    assert.deepEqual(resource, { a: "text", b: { x: [1, null] }, c: 2.5, n: 3 });
    const silent = uniqueId("silent");
    await container.scripts.storedProcedures.create({ id: silent, body: "function () {}" });
    assert.equal((await container.scripts.storedProcedure(silent).execute(pk, [])).resource, null);
  });

  test("bulk import: 2,500 documents in calls of at most 1,000 operations, resuming from the count", async () => {
    const pk = uniqueId("bulk");
    const docs = Array.from({ length: 2500 }, (_, i) => ({ id: `d${i}`, pk, n: i }));
    const counts = await importAll(container, pk, docs);
    assert.deepEqual(counts, [1000, 1000, 500], "the default quota is 1000 operations per call");
    const { resources } = await container.items
      .query("SELECT VALUE [COUNT(1), SUM(c.n)] FROM c", { partitionKey: pk })
      .fetchAll();
    assert.deepEqual(resources, [[2500, (2499 * 2500) / 2]]);
    const read = await container.item("d1234", pk).read();
    assert.equal(read.resource.n, 1234);
  });

  test("query-and-update loop: 1,500 documents marked over calls that pass the continuation back", async () => {
    const pk = uniqueId("mark");
    const docs = Array.from({ length: 1500 }, (_, i) => ({ id: `m${i}`, pk, n: i }));
    assert.deepEqual(await importAll(container, pk, docs), [1000, 500]);

    const calls = [];
    let continuation;
    do {
      if (calls.length > 10) throw new Error(`the loop is not progressing: ${JSON.stringify(calls)}`);
      const { resource } = await container.scripts.storedProcedure("markAll").execute(pk, ["run-1", continuation]);
      calls.push(resource.updated);
      continuation = resource.continuation;
    } while (continuation);
    // Call 1: 9 pages of 100 (a query and 100 replaces each: 909 operations), then a tenth query
    // and 90 replaces reach the quota of 1000. Call 2 asks for the tenth page again; the 90 are
    // filtered out, and the 510 left take 6 pages.
    assert.deepEqual(calls, [990, 510]);

    const after = await partitionDocs(container, pk);
    assert.equal(after.length, 1500);
    for (const d of after) {
      assert.equal(d.updates, 1, `${d.id} updated ${d.updates} times`);
      assert.equal(d.marked, "run-1");
    }
    const again = await container.scripts.storedProcedure("markAll").execute(pk, ["run-2", undefined]);
    assert.deepEqual(again.resource, { updated: 0 });
  });

  test("a throw after three writes leaves none of them, and is charged", async () => {
    const id = uniqueId("throw");
    await container.scripts.storedProcedures.create({
      id,
      body: function (pk) {
        const collection = getContext().getCollection();
        for (let i = 0; i < 3; i++) collection.createDocument(collection.getSelfLink(), { id: `t${i}`, pk });
        collection.queryDocuments(collection.getSelfLink(), "SELECT VALUE COUNT(1) FROM c", (err, counts) => {
          if (err) throw err;
          throw new Error(`stopping after ${counts[0]} writes`);
        });
      },
    });
    const pk = uniqueId("p");
    const err = await expectStatus(container.scripts.storedProcedure(id).execute(pk, [pk]), 400);
    assert.ok(
      err.message.includes(`${SCRIPT_EXCEPTION}Error: stopping after 3 writes`),
      err.message,
    );
    assert.ok(Number(err.headers?.["x-ms-request-charge"]) > 0, "a failed call is charged for its work");
    assert.deepEqual(await partitionDocs(container, pk), []);
  });

  test("reads and queries see the transaction's own writes; they commit together", async () => {
    const id = uniqueId("own");
    await container.scripts.storedProcedures.create({
      id,
      body: function (pk) {
        const collection = getContext().getCollection();
        const link = collection.getSelfLink();
        // Documents by id: the collection's link by name, then docs/{id}.
        const byId = (id) => `${collection.getAltLink()}/docs/${id}`;
        collection.createDocument(link, { id: "a", pk, v: 1 });
        collection.upsertDocument(link, { id: "b", pk, v: 2 });
        collection.createDocument(link, { id: "c", pk, v: 3 }, (err, created) => {
          if (err) throw err;
          // By _self: a document created in this call has a provisional one until commit.
          collection.replaceDocument(created._self, { id: "c", pk, v: 30 });
          collection.deleteDocument(byId("a"));
          collection.readDocument(byId("c"), (err2, c) => {
            if (err2) throw err2;
            collection.queryDocuments(link, "SELECT VALUE SUM(c.v) FROM c", (err3, sums) => {
              if (err3) throw err3;
              getContext().getResponse().setBody({ c: c.v, sum: sums[0] });
            });
          });
        });
      },
    });
    const pk = uniqueId("p");
    const { resource } = await container.scripts.storedProcedure(id).execute(pk, [pk]);
    assert.deepEqual(resource, { c: 30, sum: 32 });
    const docs = await partitionDocs(container, pk);
    assert.deepEqual(
      docs.map((d) => [d.id, d.v]).sort(),
      [
        ["b", 2],
        ["c", 30],
      ],
    );
  });

  test("the query chain: __.filter, __.chain().filter().sortBy().pluck().flatten().value(), paged", async () => {
    // The JavaScript query API's documented forms (learn.microsoft.com, "JavaScript query API
    // in Azure Cosmos DB"), over the procedure's logical partition, its own writes included.
    const id = uniqueId("chain");
    await container.scripts.storedProcedures.create({
      id,
      body: function (pk) {
        const collection = getContext().getCollection();
        collection.createDocument(collection.getSelfLink(), { id: "new", pk, n: 0, tags: ["z"] });
        const out = {};
        __.filter(
          (d) => d.n >= 2,
          (err, feed) => {
            if (err) throw err;
            out.filtered = feed.map((d) => d.id).sort();
          },
        );
        const accepted = __.chain()
          .filter((d) => Array.isArray(d.tags))
          .sortByDescending((d) => d.n)
          .pluck("tags")
          .flatten()
          .value((err, feed) => {
            if (err) throw err;
            out.tags = feed;
          });
        out.accepted = accepted.isAccepted;
        __.chain()
          .map((d) => d.id)
          .sortBy()
          .value({ pageSize: 2 }, (err, feed, options) => {
            if (err) throw err;
            out.page = feed;
            __.chain()
              .map((d) => d.id)
              .sortBy()
              .value({ pageSize: 2, continuation: options.continuation }, (err2, rest) => {
                if (err2) throw err2;
                out.rest = rest;
                getContext().getResponse().setBody(out);
              });
          });
      },
    });
    const pk = uniqueId("p");
    for (const [i, tags] of [["a"], ["b", "c"], null].entries()) {
      await container.items.create({ id: `d${i}`, pk, n: i + 1, ...(tags ? { tags } : {}) });
    }
    await container.items.create({ id: "elsewhere", pk: uniqueId("p"), n: 9, tags: ["x"] });
    const { resource } = await container.scripts.storedProcedure(id).execute(pk, [pk]);
    assert.deepEqual(resource, {
      filtered: ["d1", "d2"],
      tags: ["b", "c", "a", "z"],
      accepted: true,
      page: ["d0", "d1"],
      rest: ["d2", "new"],
    });
  });

  test("a write to another partition key fails the call with 400 and writes nothing", async () => {
    const id = uniqueId("other");
    await container.scripts.storedProcedures.create({
      id,
      body: function (pk, otherPk) {
        const collection = getContext().getCollection();
        collection.createDocument(collection.getSelfLink(), { id: "mine", pk });
        // The error cannot be caught: the call ends here.
        collection.createDocument(collection.getSelfLink(), { id: "theirs", pk: otherPk }, () => {
          getContext().getResponse().setBody("the callback ran");
        });
      },
    });
    const pk = uniqueId("p");
    const otherPk = uniqueId("p");
    const err = await expectStatus(container.scripts.storedProcedure(id).execute(pk, [pk, otherPk]), 400);
    assert.equal(err.body?.message ?? err.message, OTHER_PARTITION);
    assert.deepEqual(await partitionDocs(container, pk), []);
    assert.deepEqual(await partitionDocs(container, otherPk), []);
  });

  test("getContext().abort(error) rolls the call back with 400", async () => {
    const id = uniqueId("abort");
    await container.scripts.storedProcedures.create({
      id,
      body: function (pk) {
        const collection = getContext().getCollection();
        collection.createDocument(collection.getSelfLink(), { id: "kept-or-not", pk }, (err) => {
          if (err) throw err;
          getContext().abort(new Error("changed my mind"));
        });
      },
    });
    const pk = uniqueId("p");
    const err = await expectStatus(container.scripts.storedProcedure(id).execute(pk, [pk]), 400);
    assert.ok(err.message.includes(`${SCRIPT_EXCEPTION}Error: changed my mind`), err.message);
    assert.deepEqual(await partitionDocs(container, pk), []);
  });

  test("an operation's error thrown on keeps its status: 409 for a duplicate id, and nothing is written", async () => {
    const id = uniqueId("dup");
    await container.scripts.storedProcedures.create({
      id,
      body: function (pk) {
        const collection = getContext().getCollection();
        collection.createDocument(collection.getSelfLink(), { id: "fresh", pk });
        collection.createDocument(collection.getSelfLink(), { id: "taken", pk }, (err) => {
          if (err) throw err;
        });
      },
    });
    const pk = uniqueId("p");
    await container.items.create({ id: "taken", pk });
    const err = await expectStatus(container.scripts.storedProcedure(id).execute(pk, [pk]), 409);
    assert.ok(err.message.includes(SCRIPT_EXCEPTION), err.message);
    assert.deepEqual(
      (await partitionDocs(container, pk)).map((d) => d.id),
      ["taken"],
    );
  });

  test("a unique key violation fails the call at commit with 409; nothing is written", async () => {
    const { container: users } = await database.containers.create({
      id: uniqueId("users"),
      partitionKey: { paths: ["/pk"] },
      uniqueKeyPolicy: { uniqueKeys: [{ paths: ["/email"] }] },
    });
    await users.scripts.storedProcedures.create({
      id: "addTwo",
      body: function (pk) {
        const collection = getContext().getCollection();
        collection.createDocument(collection.getSelfLink(), { id: "a", pk, email: "same@x" });
        // Partita checks unique keys when the transaction commits, not here: this callback
        // sees no error.
        collection.createDocument(collection.getSelfLink(), { id: "b", pk, email: "same@x" }, (err) => {
          getContext().getResponse().setBody(err ? err.number : "accepted");
        });
      },
    });
    const pk = uniqueId("p");
    const err = await expectStatus(users.scripts.storedProcedure("addTwo").execute(pk, [pk]), 409);
    assert.match(err.message, /Unique index constraint violation/);
    assert.deepEqual(await partitionDocs(users, pk), []);
  });

  test("script logging: console.log lines come back percent-encoded in x-ms-documentdb-script-log-results", async () => {
    const id = uniqueId("log");
    await container.scripts.storedProcedures.create({
      id,
      body: function (n) {
        console.log("importing", n, "items");
        console.log("100% done; café & crème = ok");
        getContext().getResponse().setBody(n);
      },
    });
    const pk = uniqueId("p");
    const logged = await container.scripts.storedProcedure(id).execute(pk, [3], { enableScriptLogging: true });
    assert.equal(logged.resource, 3);
    const raw = logged.headers["x-ms-documentdb-script-log-results"];
    assert.equal(typeof raw, "string", "the log header is present");
    assert.ok(!raw.includes(" ") && raw.includes("%"), `percent-encoded: ${raw}`);
    assert.equal(decodeURIComponent(raw), "importing 3 items\n100% done; café & crème = ok");

    const quiet = await container.scripts.storedProcedure(id).execute(pk, [3]);
    assert.equal(quiet.headers["x-ms-documentdb-script-log-results"], undefined);
  });

  // ---- triggers -----------------------------------------------------------------------------

  test("a pre-trigger stamps created items with the server's time; the stored and returned item have it", async () => {
    const pk = uniqueId("p");
    const before = Date.now();
    const created = await container.items.create({ id: "stamped", pk }, { preTriggerInclude: ["stampCreatedAt"] });
    const after = Date.now();
    assert.equal(created.statusCode, 201);
    const stamp = created.resource.createdAt;
    assert.equal(typeof stamp, "number");
    // The server runs on this machine, on the same clock.
    assert.ok(stamp >= before - 1000 && stamp <= after + 1000, `createdAt ${stamp} outside [${before}, ${after}]`);
    assert.equal((await container.item("stamped", pk).read()).resource.createdAt, stamp);

    const kept = await container.items.create(
      { id: "given", pk, createdAt: 7 },
      { preTriggerInclude: ["stampCreatedAt"] },
    );
    assert.equal(kept.resource.createdAt, 7, "an item with a createdAt keeps it");
    const plain = await container.items.create({ id: "plain", pk });
    assert.equal(plain.resource.createdAt, undefined, "without the include header the trigger does not run");
    // The trigger fires on creates: an upsert may create, a replace may not.
    const upserted = await container.items.upsert({ id: "upserted", pk }, { preTriggerInclude: ["stampCreatedAt"] });
    assert.equal(typeof upserted.resource.createdAt, "number");
    await expectStatus(
      container.item("plain", pk).replace({ id: "plain", pk }, { preTriggerInclude: ["stampCreatedAt"] }),
      400,
    );
  });

  test("scripts read the request's headers (getRequest().getValue) and the container's quota and usage", async () => {
    const id = uniqueId("headers");
    await container.scripts.triggers.create({
      id,
      triggerType: "Pre",
      triggerOperation: "All",
      body: function () {
        const req = getContext().getRequest();
        const doc = req.getBody();
        doc.pkHeader = req.getValue("x-ms-documentdb-partitionkey");
        doc.app = req.getValue("x-app-tag");
        req.setBody(doc);
      },
    });
    const pk = uniqueId("p");
    const { resource } = await container.items.create(
      { id: "h", pk },
      { preTriggerInclude: [id], initialHeaders: { "x-app-tag": "tagged" } },
    );
    assert.deepEqual([resource.pkHeader, resource.app], [JSON.stringify([pk]), "tagged"]);
    await container.scripts.storedProcedures.create({
      id,
      body: function () {
        const res = getContext().getResponse();
        res.setBody({
          tag: getContext().getRequest().getValue("x-app-tag") ?? null,
          quota: res.getMaxResourceQuota(),
          usage: res.getResourceQuotaCurrentUsage(),
        });
      },
    });
    const sproc = container.scripts.storedProcedure(id);
    const run = await sproc.execute(pk, [], { initialHeaders: { "x-app-tag": "run" } });
    assert.equal(run.resource.tag, "run");
    assert.equal((await sproc.execute(pk, [])).resource.tag, null);
    // The response's quota and usage, as the headers of an item response give them.
    const read = await container.item("h", pk).read();
    assert.equal(run.resource.quota, read.headers["x-ms-resource-quota"]);
    assert.match(run.resource.usage, /^documentSize=\d+;documentsSize=\d+;documentsCount=\d+;collectionSize=\d+;$/);
  });

  test("a post-trigger writes an audit document in the item's partition, in the write's transaction", async () => {
    const pk = uniqueId("p");
    const created = await container.items.create(
      { id: "order-1", pk, total: 5 },
      { postTriggerInclude: ["auditWrite"] },
    );
    assert.equal(created.statusCode, 201);
    assert.equal(created.resource.total, 5);
    const audit = async () => (await container.item("audit-order-1", pk).read()).resource;
    assert.deepEqual(
      (({ id, pk: p, kind, of, op }) => ({ id, pk: p, kind, of, op }))(await audit()),
      { id: "audit-order-1", pk, kind: "audit", of: "order-1", op: "Create" },
    );

    // If-Match holds with triggers too: the created version's etag matches once, then is stale.
    const ifCreated = { type: "IfMatch", condition: created.etag };
    await container
      .item("order-1", pk)
      .replace({ id: "order-1", pk, total: 6 }, { postTriggerInclude: ["auditWrite"], accessCondition: ifCreated });
    assert.equal((await audit()).op, "Replace");
    await expectStatus(
      container
        .item("order-1", pk)
        .replace({ id: "order-1", pk, total: 7 }, { postTriggerInclude: ["auditWrite"], accessCondition: ifCreated }),
      412,
    );
    assert.equal((await container.item("order-1", pk).read()).resource.total, 6);
    await container.item("order-1", pk).delete({ postTriggerInclude: ["auditWrite"] });
    assert.equal((await audit()).op, "Delete");
    assert.equal((await container.item("order-1", pk).read()).statusCode, 404);
  });

  test("a post-trigger that throws fails the write with 400; neither the item nor the trigger's write is kept", async () => {
    const pk = uniqueId("p");
    const err = await expectStatus(
      container.items.create({ id: "doomed", pk }, { postTriggerInclude: ["refuseWrite"] }),
      400,
    );
    assert.ok(err.message.includes(`${SCRIPT_EXCEPTION}Error: refused doomed`), err.message);
    assert.deepEqual(await partitionDocs(container, pk), []);

    // On a replace, the old version stays.
    await container.items.create({ id: "kept", pk, v: 1 });
    await expectStatus(
      container.item("kept", pk).replace({ id: "kept", pk, v: 2 }, { postTriggerInclude: ["refuseWrite"] }),
      400,
    );
    assert.equal((await container.item("kept", pk).read()).resource.v, 1);
  });

  test("patch does not run triggers yet: a patch that names one is refused with 400", async () => {
    const pk = uniqueId("p");
    await container.items.create({ id: "p1", pk });
    await expectStatus(
      container.item("p1", pk).patch([{ op: "set", path: "/x", value: 1 }], { postTriggerInclude: ["auditWrite"] }),
      400,
    );
  });

  // ---- user-defined functions ---------------------------------------------------------------

  test("UDFs in SELECT, in WHERE and beside ORDER BY, in single- and cross-partition queries", async () => {
    const udfs = container.scripts.userDefinedFunctions;
    await udfs.create({
      id: "salesTax",
      body: function (amount) {
        return Math.round(amount * 0.08 * 100) / 100;
      },
    });
    await udfs.create({ id: "isEven", body: "function (n) { return n % 2 === 0; }" });
    const tag = uniqueId("udfq");
    const pks = Array.from({ length: 8 }, (_, i) => `${tag}-k${i}`);
    for (let i = 0; i < 24; i++) {
      await container.items.create({ id: `u${i}`, pk: pks[i % 8], tag, n: i, amount: i * 25 });
    }
    const { resources: ranges } = await container.readPartitionKeyRanges().fetchAll();
    assert.equal(ranges.length, 4, "the container has several physical partitions");

    const cross = async (query) => (await container.items.query(query).fetchAll()).resources;
    assert.deepEqual(
      await cross(`SELECT VALUE udf.salesTax(c.amount) FROM c WHERE c.tag = '${tag}' ORDER BY c.n`),
      Array.from({ length: 24 }, (_, i) => 2 * i), // 8% of 25 i
    );
    assert.deepEqual(
      await cross(`SELECT VALUE c.n FROM c WHERE c.tag = '${tag}' AND udf.isEven(c.n) ORDER BY c.n DESC`),
      [22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0],
    );
    assert.deepEqual(
      await cross(`SELECT VALUE SUM(udf.salesTax(c.amount)) FROM c WHERE c.tag = '${tag}' AND NOT udf.isEven(c.n)`),
      [2 * (1 + 3 + 5 + 7 + 9 + 11 + 13 + 15 + 17 + 19 + 21 + 23)],
    );
    const { resources: param } = await container.items
      .query({
        query: "SELECT VALUE c.id FROM c WHERE c.tag = @tag AND udf.salesTax(c.amount) = @tax",
        parameters: [
          { name: "@tag", value: tag },
          { name: "@tax", value: 14 },
        ],
      })
      .fetchAll();
    assert.deepEqual(param, ["u7"]);

    const { resources: single } = await container.items
      .query("SELECT c.id, udf.salesTax(c.amount) AS tax FROM c WHERE udf.isEven(c.n) ORDER BY c.n", {
        partitionKey: pks[2],
      })
      .fetchAll();
    assert.deepEqual(single, [
      { id: "u2", tax: 4 },
      { id: "u10", tax: 20 },
      { id: "u18", tax: 36 },
    ]);
  });

  test("a UDF that throws fails the query with 400; an unknown udf is 400", async () => {
    await container.scripts.userDefinedFunctions.create({
      id: "strictPositive",
      body: function (n) {
        if (n <= 0) throw new Error(`not positive: ${n}`);
        return n;
      },
    });
    const pk = uniqueId("p");
    await container.items.create({ id: "zero", pk, n: 0 });
    const err = await expectStatus(
      container.items.query("SELECT VALUE udf.strictPositive(c.n) FROM c").fetchAll(),
      400,
    );
    assert.ok(err.message.includes(`${SCRIPT_EXCEPTION}Error: not positive: 0`), err.message);
    await expectStatus(
      container.items.query("SELECT VALUE udf.strictPositive(c.n) FROM c", { partitionKey: pk }).fetchAll(),
      400,
    );
    const unknown = await expectStatus(
      container.items.query("SELECT VALUE udf.noSuchFunction(c.n) FROM c").fetchAll(),
      400,
    );
    assert.match(unknown.message, /udf\.noSuchFunction/);
  });
});

// A server with a short time budget: runaway scripts are stopped, roll back, and leave the
// server serving, also while they run.
suite(
  "scripts: runaway",
  (ctx) => {
    let container;
    before(async () => {
      const { database } = await ctx.client.databases.create({ id: uniqueId("db-runaway") });
      ({ container } = await database.containers.create({ id: "runaway", partitionKey: { paths: ["/pk"] } }));
      const sprocs = container.scripts.storedProcedures;
      await sprocs.create({
        id: "spin",
        body: function (pk) {
          const collection = getContext().getCollection();
          collection.createDocument(collection.getSelfLink(), { id: "before-the-loop", pk });
          for (;;) {
            // never returns
          }
        },
      });
      await sprocs.create({
        id: "hugeString",
        body: 'function () { getContext().getResponse().setBody("x".repeat(1 << 30).length); }',
      });
      await sprocs.create({
        id: "recurse",
        body: "function () { function down(n) { return down(n + 1) + 1; } down(0); }",
      });
      await sprocs.create({ id: "helloWorld", body: helloWorld });
    });

    test("an endless loop is stopped with 408 after --script-timeout; reads and other partitions are served meanwhile", async () => {
      const pk = uniqueId("p");
      const otherPk = uniqueId("p");
      await container.items.create({ id: "present", pk });
      const started = Date.now();
      const spinning = container.scripts
        .storedProcedure("spin")
        .execute(pk, [pk])
        .then(
          () => ({ ok: true, at: Date.now() }),
          (err) => ({ err, at: Date.now() }),
        );
      await new Promise((resolve) => setTimeout(resolve, 300)); // the loop is running now

      const readAt = Date.now();
      const read = await container.item("present", pk).read();
      assert.equal(read.statusCode, 200);
      const readTook = Date.now() - readAt;
      const otherWrite = await container.items.create({ id: "elsewhere", pk: otherPk });
      assert.equal(otherWrite.statusCode, 201);
      const quickDone = Date.now();
      // A write to the script's own logical partition waits for the script to end.
      const sameWrite = container.items.create({ id: "after", pk }).then(() => Date.now());

      const outcome = await spinning;
      assert.ok(outcome.err, "the endless loop answered without an error");
      assert.equal(outcome.err.code, 408, outcome.err.message);
      const elapsed = outcome.at - started;
      assert.ok(elapsed >= 1900 && elapsed < 10_000, `stopped after ${elapsed} ms with --script-timeout 2s`);
      assert.ok(readTook < 1000, `a point read took ${readTook} ms while the loop ran`);
      assert.ok(quickDone < outcome.at, "the read and the other partition's write finished before the loop ended");
      const sameWriteAt = await sameWrite;
      assert.ok(sameWriteAt - started >= 1500, `the same-partition write finished ${sameWriteAt - started} ms in`);

      const rolledBack = await container.item("before-the-loop", pk).read();
      assert.equal(rolledBack.statusCode, 404, "the loop's write rolled back");
      assert.equal((await container.item("after", pk).read()).statusCode, 200);
    });

    test('"x".repeat(1 << 30) and endless recursion are stopped with 400; the server keeps serving', async () => {
      const pk = uniqueId("p");
      const big = await expectStatus(container.scripts.storedProcedure("hugeString").execute(pk, []), 400);
      assert.ok(big.message.includes(`${SCRIPT_EXCEPTION}RangeError`), big.message);
      const deep = await expectStatus(container.scripts.storedProcedure("recurse").execute(pk, []), 400);
      assert.ok(deep.message.includes(`${SCRIPT_EXCEPTION}RangeError: Maximum call stack size exceeded`), deep.message);

      assert.equal((await container.scripts.storedProcedure("helloWorld").execute(pk, [])).resource, "Hello, World");
      const created = await container.items.create({ id: "still-here", pk });
      assert.equal(created.statusCode, 201);
    });
  },
  { serverArgs: ["--script-timeout", "2s"] },
);
