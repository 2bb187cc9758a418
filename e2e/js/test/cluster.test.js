// A cluster of three `partita serve` processes (docs/cluster.md) through the JavaScript SDK: a
// database and a container created through two nodes, items written through every node, and
// read, queried across partitions (the SDK's query plan and per-range queries) and counted
// through every node; a stored procedure created through one node and run through the others;
// a session's token, passed from node to node, gives it its own writes and monotonic reads.

import assert from "node:assert/strict";
import net from "node:net";
import { after, before, describe, test } from "node:test";

import { disposeClient, newClient, startServer } from "../lib/harness.js";

// A loopback cluster address whose port and the two after it are free now.
async function freeTriple() {
  for (;;) {
    const base = 20000 + 3 * Math.floor(Math.random() * 13000);
    const servers = [];
    try {
      for (let i = 0; i < 3; i++) {
        const s = net.createServer();
        await new Promise((resolve, reject) => {
          s.once("error", reject);
          s.listen(base + i, "127.0.0.1", resolve);
        });
        servers.push(s);
      }
      return `127.0.0.1:${base}`;
    } catch {
      // taken: try another
    } finally {
      await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
    }
  }
}

function increment(id) {
  const c = getContext().getCollection();
  c.readDocument(`${c.getAltLink()}/docs/${id}`, (err, doc) => {
    if (err) throw err;
    doc.n += 1;
    c.replaceDocument(doc._self, doc, (err2) => {
      if (err2) throw err2;
    });
  });
}

describe("a cluster of three nodes", () => {
  let servers = [];
  let clients = [];
  before(async () => {
    process.env.PARTITA_CLUSTER_SECRET = "the JavaScript suite's cluster secret";
    const addrs = [await freeTriple(), await freeTriple(), await freeTriple()];
    const join = addrs.join(",");
    servers = await Promise.all(addrs.map((a) => startServer({ tls: false, args: ["--cluster-addr", a, "--join", join] })));
    clients = servers.map((s) => newClient(s));
  });
  after(async () => {
    clients.forEach(disposeClient);
    await Promise.all(servers.map((s) => s.stop()));
  });

  test("every node serves what any node wrote", async () => {
    await clients[0].databases.create({ id: "db" });
    await clients[1].database("db").containers.create({ id: "c", partitionKey: { paths: ["/pk"] }, throughput: 12000 });
    const containers = clients.map((c) => c.database("db").container("c"));
    for (let i = 0; i < 30; i++) {
      await containers[i % 3].items.create({ id: `item${i}`, pk: `k${i % 7}`, n: i });
    }
    for (const [node, c] of containers.entries()) {
      const { resource } = await c.item("item5", "k5").read();
      assert.equal(resource?.n, 5, `node ${node + 1} reads item5`);
      const { resources } = await c.items.query("SELECT VALUE c.n FROM c ORDER BY c.n").fetchAll();
      assert.deepEqual(resources, [...Array(30).keys()], `node ${node + 1} queries across partitions`);
      const { resources: count } = await c.items.query("SELECT VALUE COUNT(1) FROM c").fetchAll();
      assert.deepEqual(count, [30], `node ${node + 1} counts`);
    }
  });

  test("a stored procedure created through one node runs through the others", async () => {
    const containers = clients.map((c) => c.database("db").container("c"));
    await containers[2].scripts.storedProcedures.create({ id: "increment", body: increment });
    await Promise.all(
      containers.map(async (c) => {
        for (let i = 0; i < 5; i++) {
          await c.scripts.storedProcedure("increment").execute("k0", ["item0"]);
        }
      }),
    );
    const { resource } = await containers[1].item("item0", "k0").read();
    assert.equal(resource.n, 15);
  });

  test("a client's session token carries its writes to reads through every node", async () => {
    await clients[0].database("db").containers.create({ id: "s", partitionKey: { paths: ["/pk"] }, throughput: 12000 });
    const containers = clients.map((c) => c.database("db").container("s"));
    const lsns = new Map(); // the session's newest LSN of each range
    const token = () => [...lsns].map(([range, lsn]) => `${range}:-1#${lsn}`).join(",");
    const read = new Map(); // the newest value read of each key
    for (let i = 0; i < 30; i++) {
      const key = `s${i % 5}`;
      const w = await containers[i % 3].items.upsert({ id: key, pk: key, v: i }, { sessionToken: token() });
      for (const t of w.headers["x-ms-session-token"].split(",")) {
        const [range, rest] = t.split(":");
        const lsn = Number(rest.split("#")[1]);
        lsns.set(range, Math.max(lsns.get(range) ?? 0, lsn));
      }
      read.set(key, i);
      // Through the two other nodes, with the session's token: its own write, and no older
      // value of another key than the session read before.
      for (const node of [(i + 1) % 3, (i + 2) % 3]) {
        for (const k of [key, `s${(i + 2) % 5}`]) {
          const { resource } = await containers[node].item(k, k).read({ sessionToken: token() });
          if (read.has(k)) {
            assert.ok(resource.v >= read.get(k), `node ${node + 1} read ${k} at ${resource?.v} after the session saw ${read.get(k)}`);
            read.set(k, resource.v);
          }
        }
      }
    }
  });
});
