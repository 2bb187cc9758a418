// The DocumentDB-era Node SDK (`documentdb` 1.15.3, the SDK of the partitioned collections
// the service's early documents describe) against a real server: it speaks API version
// 2017-11-15, keeps session tokens in the simple form "<range>:<LSN>" only (a vector token
// made it throw inside its response handler, which killed the process on the first write),
// addresses everything by _self links signed over lower-cased resource ids, and merges the
// session token of a 404.
//
// The SDK has no plain-HTTP transport, so this suite runs over HTTPS only. It also pins
// TLS 1.0 (secureProtocol "TLSv1_client_method"), which Partita refuses as the service does
// today; the shim below lifts that pin for the SDK's requests and trusts the server's own
// certificate, and changes nothing else about them.

import assert from "node:assert/strict";
import https from "node:https";
import { createRequire } from "node:module";
import { after, before, describe, test } from "node:test";

import { ACCOUNT_KEY, startServer, transports, uniqueId } from "../lib/harness.js";

const require = createRequire(import.meta.url);
const documentdb = require("documentdb");

let serverCA; // the certificate of the suite's server, trusted by the shim
const originalRequest = https.request;
https.request = function (options, callback) {
  if (options && options.secureProtocol === "TLSv1_client_method") {
    options = { ...options, ca: serverCA };
    delete options.secureProtocol;
  }
  return originalRequest.call(this, options, callback);
};

/** Calls a callback-style SDK method: resolves { resource, headers }, rejects with its error. */
function call(target, method, ...args) {
  return new Promise((resolve, reject) => {
    target[method](...args, (err, resource, headers) => {
      if (err) {
        reject(Object.assign(new Error(`${method}: ${err.code} ${err.body ?? err.message}`), err, { headers }));
      } else {
        resolve({ resource, headers });
      }
    });
  });
}

/** Runs a query iterator to its end: resolves { results, headers } of the last page. */
function all(iterator) {
  return new Promise((resolve, reject) => {
    iterator.toArray((err, results, headers) => (err ? reject(Object.assign(new Error(`query: ${err.code} ${err.body}`), err)) : resolve({ results, headers })));
  });
}

/** Awaits promise, which must fail with status (and substatus, when given). */
async function expectFailure(promise, status, substatus) {
  let err;
  try {
    await promise;
  } catch (e) {
    err = e;
  }
  assert.ok(err, `expected ${status}, but the request succeeded`);
  assert.equal(err.code, status, err.message);
  if (substatus !== undefined) assert.equal(err.substatus, substatus, `substatus of ${err.message}`);
  return err;
}

/** A simple-form session token: "<range>:<LSN>", comma-joined for several ranges. */
const SIMPLE_TOKENS = /^\d+:\d+(,\d+:\d+)*$/;

if (transports().includes("https")) {
  describe("legacy documentdb 1.15.3 [https]", { timeout: 120_000 }, () => {
    const ctx = {};
    before(async () => {
      ctx.server = await startServer({ tls: true });
      serverCA = ctx.server.certPem;
      const policy = new documentdb.DocumentBase.ConnectionPolicy();
      policy.EnableEndpointDiscovery = false;
      ctx.client = new documentdb.DocumentClient(ctx.server.endpoint, { masterKey: ACCOUNT_KEY }, policy, "Session");
    });
    after(async () => {
      ctx.client?.requestAgent?.destroy();
      await ctx.server?.stop();
    });

    test("databases, partitioned collections, documents and queries, with session tokens", async () => {
      const client = ctx.client;
      const { resource: db } = await call(client, "createDatabase", { id: uniqueId("legacy") });
      // 20,000 RU/s: two physical partitions, so that queries cross partitions.
      const { resource: coll } = await call(client, "createCollection", db._self,
        { id: "c", partitionKey: { paths: ["/pk"], kind: "Hash" } }, { offerThroughput: 20000 });
      assert.match(coll._self, /^dbs\/[^/]+\/colls\/[^/]+\/$/);
      const ranges = await all(client.readPartitionKeyRanges(coll._self));
      assert.ok(ranges.results.length >= 2, `${ranges.results.length} partition key ranges`);

      const docs = [];
      for (let i = 0; i < 20; i++) {
        const { resource, headers } = await call(client, "createDocument", coll._self, { id: `d${i}`, pk: `k${i % 5}`, n: i });
        assert.match(headers["x-ms-session-token"], SIMPLE_TOKENS, "a write's session token");
        docs.push(resource);
      }
      // The client sends the tokens it kept back with each read: accepted.
      for (const d of docs.slice(0, 5)) {
        const { resource, headers } = await call(client, "readDocument", d._self, { partitionKey: d.pk });
        assert.equal(resource.n, d.n);
        assert.match(headers["x-ms-session-token"], SIMPLE_TOKENS, "a read's session token");
      }
      const { resource: replaced } = await call(client, "replaceDocument", docs[0]._self, { ...docs[0], n: 100 }, { partitionKey: docs[0].pk });
      assert.equal(replaced.n, 100);
      const { resource: upserted } = await call(client, "upsertDocument", coll._self, { id: "u", pk: "k0", n: -1 });
      assert.equal(upserted.id, "u");

      const single = await all(client.queryDocuments(coll._self,
        { query: "SELECT * FROM c WHERE c.pk = @pk", parameters: [{ name: "@pk", value: "k1" }] }, { partitionKey: "k1" }));
      assert.deepEqual(single.results.map((d) => d.n).sort((a, b) => a - b), [1, 6, 11, 16]);
      const cross = await all(client.queryDocuments(coll._self, "SELECT * FROM c WHERE c.n >= 10", { enableCrossPartitionQuery: true }));
      assert.equal(cross.results.length, 11); // 10..19, and d0 at 100
      const feed = await all(client.readDocuments(coll._self, { maxItemCount: 7 }));
      assert.equal(feed.results.length, 21);

      // A missing document: 404 without a substatus, with its partition's session token,
      // which the client merges (it threw on the vector form here too).
      const missing = await expectFailure(call(client, "readDocument", coll._self + "docs/nope", { partitionKey: "k0" }), 404);
      assert.equal(missing.substatus, undefined);
      assert.match(missing.headers["x-ms-session-token"], SIMPLE_TOKENS);

      await call(client, "deleteDocument", docs[1]._self, { partitionKey: docs[1].pk });
      await expectFailure(call(client, "readDocument", docs[1]._self, { partitionKey: docs[1].pk }), 404);

      // The collection deleted: what it held answers 404 with substatus 1003.
      await call(client, "deleteCollection", coll._self);
      await expectFailure(call(client, "readCollection", coll._self), 404);
      await expectFailure(call(client, "readDocument", docs[2]._self, { partitionKey: docs[2].pk }), 404, 1003);
      await expectFailure(call(client, "createDocument", coll._self, { id: "late", pk: "k0" }), 404, 1003);

      // The database deleted: its _self link answers 404, not 401.
      await call(client, "deleteDatabase", db._self);
      await expectFailure(call(client, "readDatabase", db._self), 404);
      await expectFailure(call(client, "readCollection", coll._self), 404, 1003);
      await expectFailure(call(client, "readDocument", docs[3]._self, { partitionKey: docs[3].pk }), 404, 1003);
    });
  });
}
