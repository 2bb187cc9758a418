// The Cassandra API through the Node cassandra-driver (4.10.0) against a real partita serve:
// connecting (the driver's protocol step-down to v4), schema and the driver's metadata, prepared
// statements routed by the partition key indices the server sends, type round trips, paging
// over 10,000 rows, batches, lightweight transactions, TTL and writetime, token ranges that
// cover the ring exactly once across physical partitions, and errors with Cassandra's codes.
// The light parts run over plain TCP and TLS; the heavy ones once.

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";

import cassandra from "cassandra-driver";

import { ACCOUNT_KEY, cassandraClient, rawRequest, startServer, transports } from "../lib/harness.js";

const { types, errors, policies } = cassandra;
const { responseErrorCodes: codes, dataTypes, Long } = types;

const SUITE_TIMEOUT_MS = 300_000;
const READ_ONLY_KEY = Buffer.alloc(64, 7).toString("base64");

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Runs fn again while the server answers Overloaded (a 429: the table's throughput is spent for
 * this second), after the pause the message names (…RetryAfterMs=N). The driver's retry
 * policies cannot pause and only see idempotent statements, so bulk loads retry here.
 */
async function retryOverloaded(fn) {
  for (let attempt = 0; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      if (!(err instanceof errors.ResponseError) || err.code !== codes.overloaded || attempt >= 50) throw err;
      const m = /RetryAfterMs=(\d+)$/.exec(err.message);
      assert.ok(m, `an Overloaded error without RetryAfterMs: ${err.message}`);
      await sleep(Math.max(Number(m[1]), 10));
    }
  }
}

/** Awaits promise, which must reject with a ResponseError of the given code; returns it. */
async function expectCode(promise, code) {
  let result;
  try {
    result = await promise;
  } catch (err) {
    assert.ok(err instanceof errors.ResponseError, `expected a ResponseError, got ${err}`);
    assert.equal(err.code, code, `expected code 0x${code.toString(16)}, got 0x${err.code.toString(16)}: ${err.message}`);
    return err;
  }
  assert.fail(`expected code 0x${code.toString(16)}, but the statement succeeded: ${JSON.stringify(result?.rows)}`);
}

/** Cassandra's composite partition key encoding: each component as [u16 length][bytes][0]. */
function compositeKey(...parts) {
  return Buffer.concat(
    parts.flatMap((p) => {
      const len = Buffer.alloc(2);
      len.writeUInt16BE(p.length);
      return [len, p, Buffer.from([0])];
    }),
  );
}

/** The CQL encoding of a date: days since the epoch, biased by 2^31, as an unsigned int. */
function encodeDate(year, month, day) {
  const buf = Buffer.alloc(4);
  buf.writeUInt32BE(Date.UTC(year, month - 1, day) / 86_400_000 + 2 ** 31);
  return buf;
}

/**
 * A token-aware load balancing policy that notes the routing key the driver computed for each
 * statement it plans: evidence of what the driver learned from the server's prepared metadata.
 */
class RoutingRecorder extends policies.loadBalancing.TokenAwarePolicy {
  constructor() {
    super(new policies.loadBalancing.DCAwareRoundRobinPolicy("datacenter1"));
    this.lastRoutingKey = undefined;
  }

  newQueryPlan(keyspace, executionOptions, callback) {
    if (executionOptions) this.lastRoutingKey = executionOptions.getRoutingKey();
    return super.newQueryPlan(keyspace, executionOptions, callback);
  }
}

// ---------------------------------------------------------------------------------------------

for (const transport of transports()) {
  const tls = transport === "https";
  // The heavy checks run once: over plain TCP, or over TLS when only TLS is asked for.
  const heavy = transport === transports()[0];

  describe(`cassandra [${tls ? "tls" : "plain"}]`, { timeout: SUITE_TIMEOUT_MS }, () => {
    let server;
    let client;
    const routing = new RoutingRecorder();
    const driverLog = [];

    before(async () => {
      server = await startServer({ tls, cql: true, args: ["--read-only-key", READ_ONLY_KEY] });
      client = cassandraClient(server, { policies: { loadBalancing: routing } });
      client.on("log", (level, className, message) => driverLog.push(`${level} ${className} ${message}`));
    });
    after(async () => {
      await client?.shutdown();
      await server?.stop();
    });

    test("connect: protocol step-down to v4, one host in datacenter1", async () => {
      await client.connect();
      // The driver opens with DSE v2 (0x42); the server's PROTOCOL_ERROR steps it down to v4.
      assert.ok(
        driverLog.some((l) => /Protocol 0x42 not supported/.test(l)),
        `no step-down from 0x42 in the driver's log:\n${driverLog.join("\n")}`,
      );
      assert.equal(client.controlConnection.protocolVersion, types.protocolVersion.v4);
      const hosts = client.hosts.values();
      assert.equal(hosts.length, 1);
      assert.equal(hosts[0].address, `127.0.0.1:${server.cqlPort}`);
      assert.equal(hosts[0].datacenter, "datacenter1");
      assert.equal(hosts[0].cassandraVersion, "4.0.13");
      assert.equal(hosts[0].tokens.length, 8);
      const state = client.getState();
      assert.deepEqual(
        state.getConnectedHosts().map((h) => h.address),
        [`127.0.0.1:${server.cqlPort}`],
      );
      const rs = await client.execute("SELECT release_version, partitioner, data_center FROM system.local");
      assert.equal(rs.rows.length, 1);
      assert.equal(rs.first().release_version, "4.0.13");
      assert.equal(rs.first().partitioner, "org.apache.cassandra.dht.Murmur3Partitioner");
      assert.equal(rs.first().data_center, "datacenter1");
      if (tls) {
        // The driver verifies the server's certificate: without trusting it, no connection.
        const untrusting = cassandraClient(server, { sslOptions: { rejectUnauthorized: true } });
        try {
          await assert.rejects(untrusting.connect(), errors.NoHostAvailableError);
        } finally {
          await untrusting.shutdown();
        }
      }
    });

    test("schema: keyspaces and tables in the driver's metadata, ALTER, DROP, AlreadyExists", async () => {
      await client.execute(
        "CREATE KEYSPACE shop WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
      );
      assert.ok(client.metadata.keyspaces.shop, `keyspaces: ${Object.keys(client.metadata.keyspaces)}`);
      assert.equal(client.metadata.keyspaces.shop.name, "shop");
      assert.equal(client.metadata.keyspaces.shop.strategy, "org.apache.cassandra.locator.SimpleStrategy");

      await client.execute(
        `CREATE TABLE shop.orders (customer text, placed timestamp, id uuid, region text static,
           total decimal, items list<text>, tags set<text>, qty map<text, int>,
           PRIMARY KEY (customer, placed, id)) WITH CLUSTERING ORDER BY (placed DESC, id ASC)`,
      );
      await client.execute(
        `CREATE TABLE shop.readings (site text, day date, at timestamp, value double,
           PRIMARY KEY ((site, day), at))`,
      );

      const orders = await client.metadata.getTable("shop", "orders");
      assert.ok(orders, "no metadata for shop.orders");
      assert.deepEqual(orders.partitionKeys.map((c) => c.name), ["customer"]);
      assert.deepEqual(orders.clusteringKeys.map((c) => c.name), ["placed", "id"]);
      assert.deepEqual(orders.clusteringOrder, ["DESC", "ASC"]);
      const col = (name) => orders.columnsByName[name];
      assert.equal(col("customer").type.code, dataTypes.text);
      assert.equal(col("placed").type.code, dataTypes.timestamp);
      assert.equal(col("id").type.code, dataTypes.uuid);
      assert.equal(col("total").type.code, dataTypes.decimal);
      assert.equal(col("items").type.code, dataTypes.list);
      assert.equal(col("items").type.info.code, dataTypes.text);
      assert.equal(col("tags").type.code, dataTypes.set);
      assert.equal(col("qty").type.code, dataTypes.map);
      assert.deepEqual(col("qty").type.info.map((t) => t.code), [dataTypes.text, dataTypes.int]);
      assert.equal(col("region").isStatic, true);
      assert.equal(col("total").isStatic, false);

      const readings = await client.metadata.getTable("shop", "readings");
      assert.deepEqual(readings.partitionKeys.map((c) => c.name), ["site", "day"]);
      assert.deepEqual(readings.partitionKeys.map((c) => c.type.code), [dataTypes.text, dataTypes.date]);
      assert.deepEqual(readings.clusteringKeys.map((c) => c.name), ["at"]);
      assert.deepEqual(readings.clusteringOrder, ["ASC"]);

      // ALTER TABLE ADD: the driver refreshes the table on the schema change it is told of.
      await client.execute("ALTER TABLE shop.orders ADD note text");
      const altered = await client.metadata.getTable("shop", "orders");
      assert.equal(altered.columnsByName.note?.type.code, dataTypes.text);
      await client.execute("INSERT INTO shop.orders (customer, placed, id, note) VALUES ('x', 0, uuid(), 'hi')");
      const noted = await client.execute("SELECT note FROM shop.orders WHERE customer = 'x'");
      assert.deepEqual(noted.rows.map((r) => r.note), ["hi"]);

      // An existing table: AlreadyExists naming it.
      const err = await expectCode(client.execute("CREATE TABLE shop.orders (a int PRIMARY KEY)"), codes.alreadyExists);
      assert.equal(err.keyspace, "shop");
      assert.equal(err.table, "orders");
      const ksErr = await expectCode(
        client.execute("CREATE KEYSPACE shop WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}"),
        codes.alreadyExists,
      );
      assert.equal(ksErr.keyspace, "shop");
      assert.equal(ksErr.table, undefined);

      // DROP TABLE: gone from the server and from the driver's metadata.
      await client.execute("CREATE TABLE shop.scratch (k int PRIMARY KEY, v int)");
      assert.ok(await client.metadata.getTable("shop", "scratch"));
      await client.execute("DROP TABLE shop.scratch");
      assert.equal(await client.metadata.getTable("shop", "scratch"), null);
      await expectCode(client.execute("SELECT * FROM shop.scratch"), codes.invalid);
    });

    test("prepared statements: routing from the server's pk indices, type round trips", async () => {
      // A composite partition key bound in an order other than the table's: the routing key
      // must come from the prepared metadata's pk indices (here [1, 0]).
      const insert = "INSERT INTO shop.readings (day, site, at, value) VALUES (?, ?, ?, ?)";
      const day = new types.LocalDate(2026, 11, 24);
      const at = new Date(Date.UTC(2026, 10, 24, 6, 30));
      await client.execute(insert, [day, "north", at, 12.5], { prepare: true });
      const expectedKey = compositeKey(Buffer.from("north"), encodeDate(2026, 11, 24));
      assert.deepEqual(routing.lastRoutingKey, expectedKey);
      // The pk indices come from the server's PREPARED result, not the driver's table metadata.
      // (getPreparedInfo is the driver's own cache of that result.)
      assert.deepEqual(client.metadata.getPreparedInfo(client.keyspace, insert).meta.partitionKeys, [1, 0]);
      const replicas = client.getReplicas("shop", expectedKey);
      assert.deepEqual(replicas.map((h) => h.address), [`127.0.0.1:${server.cqlPort}`]);
      // The driver's Murmur3 hash of the routing key is the server's token().
      const tok = await client.execute("SELECT token(site, day) AS t FROM shop.readings WHERE site = ? AND day = ?", [
        "north",
        day,
      ], { prepare: true });
      assert.equal(tok.rows.length, 1);
      assert.equal(tok.first().t.toString(), client.metadata.newToken(expectedKey).getValue().toString());
      const read = await client.execute(
        "SELECT value FROM shop.readings WHERE site = ? AND day = ? AND at = ?",
        ["north", day, at],
        { prepare: true },
      );
      assert.deepEqual(routing.lastRoutingKey, expectedKey);
      assert.equal(read.first().value, 12.5);
      assert.equal(read.info.queriedHost, `127.0.0.1:${server.cqlPort}`);

      // Every type through a prepared INSERT and SELECT.
      await client.execute(
        `CREATE TABLE shop.kinds (id uuid PRIMARY KEY, tu timeuuid, ts timestamp, dec decimal,
           vi varint, ip inet, ip6 inet, d date, old date, t time, b blob, l list<int>, s set<text>,
           m map<text, int>, flag boolean, dbl double, big bigint, f float, small smallint,
           tiny tinyint, txt text, tup tuple<int, text>, nest map<text, frozen<list<int>>>, n int)`,
      );
      const v = {
        id: types.Uuid.random(),
        tu: types.TimeUuid.now(),
        ts: new Date(Date.UTC(2026, 10, 24, 10, 0, 0, 123)),
        dec: types.BigDecimal.fromString("-12345.678901234567890123"),
        vi: types.Integer.fromString("-123456789012345678901234567890"),
        ip: types.InetAddress.fromString("10.1.2.3"),
        ip6: types.InetAddress.fromString("2001:db8::1"),
        d: new types.LocalDate(2026, 11, 24),
        old: new types.LocalDate(1969, 12, 31),
        t: types.LocalTime.fromString("13:45:30.123456789"),
        b: Buffer.from([0, 1, 2, 0xfe, 0xff]),
        l: [3, 1, 2, 3],
        s: ["b", "a", "c"],
        m: { y: 2, x: 1 },
        flag: true,
        dbl: -1.5e300,
        big: Long.fromString("-9223372036854775808"),
        f: 1.5,
        small: -32768,
        tiny: 127,
        txt: "héllo ✓ 𝄞",
        tup: new types.Tuple(5, "five"),
        nest: { a: [1, 2], b: [3] },
      };
      const names = Object.keys(v);
      await client.execute(
        `INSERT INTO shop.kinds (${names.join(", ")}) VALUES (${names.map(() => "?").join(", ")})`,
        names.map((k) => v[k]),
        { prepare: true },
      );
      assert.deepEqual(routing.lastRoutingKey, v.id.getBuffer());
      const rs = await client.execute(`SELECT ${names.join(", ")}, n FROM shop.kinds WHERE id = ?`, [v.id], {
        prepare: true,
      });
      assert.equal(rs.rows.length, 1);
      const r = rs.first();
      assert.ok(r.id.equals(v.id));
      assert.ok(r.tu instanceof types.TimeUuid && r.tu.equals(v.tu));
      assert.equal(r.ts.getTime(), v.ts.getTime());
      assert.equal(r.dec.toString(), "-12345.678901234567890123");
      assert.equal(r.vi.toString(), "-123456789012345678901234567890");
      assert.equal(r.ip.toString(), "10.1.2.3");
      assert.equal(r.ip6.toString(), "2001:db8::1");
      assert.equal(r.d.toString(), "2026-11-24");
      assert.equal(r.old.toString(), "1969-12-31");
      assert.ok(r.t.equals(v.t), `time ${r.t}`);
      assert.deepEqual(r.b, v.b);
      assert.deepEqual(r.l, [3, 1, 2, 3]);
      assert.deepEqual(r.s, ["a", "b", "c"]);
      assert.deepEqual(r.m, { x: 1, y: 2 });
      assert.equal(r.flag, true);
      assert.equal(r.dbl, -1.5e300);
      assert.ok(r.big.equals(v.big), `bigint ${r.big}`);
      assert.equal(r.f, 1.5);
      assert.equal(r.small, -32768);
      assert.equal(r.tiny, 127);
      assert.equal(r.txt, v.txt);
      assert.deepEqual(r.tup.values(), [5, "five"]);
      assert.deepEqual(r.nest, { a: [1, 2], b: [3] });
      assert.equal(r.n, null);
      // The column types the server reports for the result.
      const typeOf = (name) => rs.columns.find((c) => c.name === name).type.code;
      assert.equal(typeOf("tu"), dataTypes.timeuuid);
      assert.equal(typeOf("vi"), dataTypes.varint);
      assert.equal(typeOf("t"), dataTypes.time);
      assert.equal(typeOf("tiny"), dataTypes.tinyint);
      assert.equal(typeOf("tup"), dataTypes.tuple);
      // Named bind markers bind by name.
      const named = await client.execute("SELECT txt FROM shop.kinds WHERE id = :key", { key: v.id }, { prepare: true });
      assert.equal(named.first().txt, v.txt);

      // Counters: increments add up, read back as a bigint.
      await client.execute("CREATE TABLE shop.hits (page text PRIMARY KEY, n counter)");
      for (const delta of [5, -2, 40]) {
        await client.execute("UPDATE shop.hits SET n = n + ? WHERE page = ?", [Long.fromNumber(delta), "home"], {
          prepare: true,
        });
      }
      const hits = await client.execute("SELECT n FROM shop.hits WHERE page = ?", ["home"], { prepare: true });
      assert.equal(hits.first().n.toString(), "43");

      // A clustering slice and ORDER BY against the clustering order (DESC) through prepares.
      const when = Date.UTC(2026, 10, 24, 10);
      for (let i = 0; i < 5; i++) {
        await client.execute(
          "INSERT INTO shop.orders (customer, placed, id, total, items, tags, region) VALUES (?, ?, ?, ?, ?, ?, ?)",
          [
            "ada",
            new Date(when + i * 3_600_000),
            types.TimeUuid.now(),
            types.BigDecimal.fromString("12.50"),
            ["tea", "cake"],
            ["b", "a"],
            `r${i}`,
          ],
          { prepare: true },
        );
      }
      const all = await client.execute("SELECT placed, region, items, tags FROM shop.orders WHERE customer = ?", ["ada"], {
        prepare: true,
      });
      assert.deepEqual(
        all.rows.map((row) => row.placed.getTime()),
        [4, 3, 2, 1, 0].map((i) => when + i * 3_600_000),
      );
      // The static column has the last value written for the partition, on every row.
      assert.deepEqual(new Set(all.rows.map((row) => row.region)), new Set(["r4"]));
      assert.deepEqual(all.first().items, ["tea", "cake"]);
      assert.deepEqual(all.first().tags, ["a", "b"]);
      const slice = await client.execute(
        "SELECT placed FROM shop.orders WHERE customer = ? AND placed >= ? AND placed < ? ORDER BY placed ASC",
        ["ada", new Date(when + 3_600_000), new Date(when + 3 * 3_600_000)],
        { prepare: true },
      );
      assert.deepEqual(
        slice.rows.map((row) => row.placed.getTime()),
        [when + 3_600_000, when + 2 * 3_600_000],
      );

      // A table dropped and made again: the server has forgotten the statement (UNPREPARED), and
      // the driver prepares it again and gets the new table's columns.
      const sel = "SELECT * FROM shop.again WHERE k = ?";
      await client.execute("CREATE TABLE shop.again (k int PRIMARY KEY, a text)");
      await client.execute("INSERT INTO shop.again (k, a) VALUES (1, 'x')");
      assert.deepEqual({ ...(await client.execute(sel, [1], { prepare: true })).first() }, { k: 1, a: "x" });
      await client.execute("DROP TABLE shop.again");
      await client.execute("CREATE TABLE shop.again (k int PRIMARY KEY, a text, b int)");
      await client.execute("INSERT INTO shop.again (k, a, b) VALUES (1, 'y', 2)");
      const logged = driverLog.length;
      const again = await client.execute(sel, [1], { prepare: true });
      assert.deepEqual({ ...again.first() }, { k: 1, a: "y", b: 2 });
      assert.ok(
        driverLog.slice(logged).some((l) => /not prepared on host .*preparing and retrying/.test(l)),
        `the driver did not re-prepare:\n${driverLog.slice(logged).join("\n")}`,
      );
    });

    test("writes: collection updates, element and range deletes, TRUNCATE", async () => {
      await client.execute(
        `CREATE TABLE shop.profiles (id int, at int, tags set<text>, scores list<int>, attrs map<text, text>,
           PRIMARY KEY (id, at))`,
      );
      const row = async () =>
        (await client.execute("SELECT tags, scores, attrs FROM shop.profiles WHERE id = 1 AND at = 0")).first();
      await client.execute(
        "INSERT INTO shop.profiles (id, at, tags, scores, attrs) VALUES (1, 0, {'a', 'b'}, [10, 20], {'k': 'v'})",
      );
      await client.execute(
        "UPDATE shop.profiles SET tags = tags + ?, scores = scores + ?, attrs[?] = ? WHERE id = 1 AND at = 0",
        [["c"], [30], "k2", "v2"],
        { prepare: true },
      );
      assert.deepEqual({ ...(await row()) }, { tags: ["a", "b", "c"], scores: [10, 20, 30], attrs: { k: "v", k2: "v2" } });
      await client.execute("UPDATE shop.profiles SET tags = tags - {'a'}, scores = [5] + scores WHERE id = 1 AND at = 0");
      await client.execute("DELETE attrs['k'], scores[1] FROM shop.profiles WHERE id = 1 AND at = 0");
      assert.deepEqual({ ...(await row()) }, { tags: ["b", "c"], scores: [5, 20, 30], attrs: { k2: "v2" } });
      await client.execute("DELETE tags FROM shop.profiles WHERE id = 1 AND at = 0");
      assert.equal((await row()).tags, null);

      // A clustering range delete removes exactly the slice.
      for (let at = 1; at <= 10; at++) {
        await client.execute("INSERT INTO shop.profiles (id, at) VALUES (?, ?)", [1, at], { prepare: true });
      }
      await client.execute("DELETE FROM shop.profiles WHERE id = 1 AND at > 3 AND at <= 8");
      const left = await client.execute("SELECT at FROM shop.profiles WHERE id = 1");
      assert.deepEqual(left.rows.map((r) => r.at), [0, 1, 2, 3, 9, 10]);
      await client.execute("DELETE FROM shop.profiles WHERE id = 1 AND at = 9");
      await client.execute("INSERT INTO shop.profiles (id, at) VALUES (2, 0)");

      await client.execute("TRUNCATE shop.profiles");
      const none = await client.execute("SELECT * FROM shop.profiles");
      assert.equal(none.rows.length, 0);
      // The table is still there and usable.
      await client.execute("INSERT INTO shop.profiles (id, at) VALUES (3, 0)");
      const one = await client.execute("SELECT id FROM shop.profiles");
      assert.deepEqual(one.rows.map((r) => r.id), [3]);
    });

    test("errors: syntax 0x2000, invalid 0x2200, wrong password, read-only key", async () => {
      await expectCode(client.execute("SELEC * FROM shop.orders"), codes.syntaxError);
      await expectCode(client.execute("SELECT * FROM shop.nope"), codes.invalid);
      await expectCode(client.execute("SELECT * FROM shop.orders WHERE total = 1"), codes.invalid);
      await expectCode(client.execute("INSERT INTO shop.orders (customer) VALUES ('a')"), codes.invalid);
      // With ALLOW FILTERING the same filter is accepted.
      const filtered = await client.execute("SELECT customer FROM shop.orders WHERE region = 'r4' ALLOW FILTERING");
      assert.deepEqual([...new Set(filtered.rows.map((r) => r.customer))], ["ada"]);

      const wrong = cassandraClient(server, { key: ACCOUNT_KEY.replace(/^C/, "D") });
      try {
        await assert.rejects(wrong.connect(), (err) => {
          assert.ok(err instanceof errors.NoHostAvailableError, `got ${err}`);
          const inner = Object.values(err.innerErrors);
          assert.equal(inner.length, 1);
          assert.ok(inner[0] instanceof errors.AuthenticationError, `inner error ${inner[0]}`);
          return true;
        });
      } finally {
        await wrong.shutdown();
      }

      const reader = cassandraClient(server, { key: READ_ONLY_KEY });
      try {
        const rs = await reader.execute("SELECT n FROM shop.hits WHERE page = 'home'");
        assert.equal(rs.first().n.toString(), "43");
        await expectCode(reader.execute("UPDATE shop.hits SET n = n + 1 WHERE page = 'home'"), codes.unauthorized);
        await expectCode(reader.execute("DROP TABLE shop.hits"), codes.unauthorized);
      } finally {
        await reader.shutdown();
      }
      const rs = await client.execute("SELECT n FROM shop.hits WHERE page = 'home'");
      assert.equal(rs.first().n.toString(), "43", "the refused write changed nothing");
    });

    if (!heavy) return;

    test("batches: a logged batch applies together; a failed conditional batch applies nothing", async () => {
      await client.execute("CREATE TABLE shop.accounts (owner text, name text, balance bigint, PRIMARY KEY (owner, name))");
      const ins = "INSERT INTO shop.accounts (owner, name, balance) VALUES (?, ?, ?)";
      await client.batch(
        [
          { query: ins, params: ["bo", "checking", Long.fromNumber(100)] },
          { query: ins, params: ["bo", "savings", Long.fromNumber(900)] },
        ],
        { prepare: true, logged: true },
      );
      const both = await client.execute("SELECT name, balance FROM shop.accounts WHERE owner = 'bo'");
      assert.deepEqual(
        both.rows.map((r) => [r.name, r.balance.toNumber()]),
        [
          ["checking", 100],
          ["savings", 900],
        ],
      );

      const upd = "UPDATE shop.accounts SET balance = ? WHERE owner = ? AND name = ?";
      const refused = await client.batch(
        [
          { query: `${upd} IF balance = ?`, params: [Long.fromNumber(0), "bo", "checking", Long.fromNumber(999)] },
          { query: upd, params: [Long.fromNumber(0), "bo", "savings"] },
        ],
        { prepare: true },
      );
      assert.equal(refused.wasApplied(), false);
      const after = await client.execute("SELECT name, balance FROM shop.accounts WHERE owner = 'bo'");
      assert.deepEqual(
        after.rows.map((r) => [r.name, r.balance.toNumber()]),
        [
          ["checking", 100],
          ["savings", 900],
        ],
      );
      // The same batch with a true condition applies both statements.
      const applied = await client.batch(
        [
          { query: `${upd} IF balance = ?`, params: [Long.fromNumber(1), "bo", "checking", Long.fromNumber(100)] },
          { query: upd, params: [Long.fromNumber(2), "bo", "savings"] },
        ],
        { prepare: true },
      );
      assert.equal(applied.wasApplied(), true);
      const now = await client.execute("SELECT balance FROM shop.accounts WHERE owner = 'bo'");
      assert.deepEqual(now.rows.map((r) => r.balance.toNumber()), [1, 2]);
    });

    test("LWT: IF NOT EXISTS twice, IF col = v showing the current value", async () => {
      await client.execute("CREATE TABLE shop.users (id text PRIMARY KEY, email text, credits int)");
      const ins = "INSERT INTO shop.users (id, email, credits) VALUES (?, ?, ?) IF NOT EXISTS";
      const first = await client.execute(ins, ["u1", "a@x", 10], { prepare: true });
      assert.equal(first.wasApplied(), true);
      const second = await client.execute(ins, ["u1", "b@x", 0], { prepare: true });
      assert.equal(second.wasApplied(), false);
      assert.equal(second.first().email, "a@x", "a refused IF NOT EXISTS shows the existing row");

      const upd = "UPDATE shop.users SET credits = ? WHERE id = ? IF credits = ?";
      const ok = await client.execute(upd, [7, "u1", 10], { prepare: true });
      assert.equal(ok.wasApplied(), true);
      const stale = await client.execute(upd, [0, "u1", 10], { prepare: true });
      assert.equal(stale.wasApplied(), false);
      assert.equal(stale.first()["[applied]"], false);
      assert.equal(stale.first().credits, 7);

      const row = await client.execute("SELECT email, credits FROM shop.users WHERE id = 'u1'");
      assert.deepEqual({ ...row.first() }, { email: "a@x", credits: 7 });
      const gone = await client.execute("DELETE FROM shop.users WHERE id = ? IF EXISTS", ["u1"], { prepare: true });
      assert.equal(gone.wasApplied(), true);
      const again = await client.execute("DELETE FROM shop.users WHERE id = ? IF EXISTS", ["u1"], { prepare: true });
      assert.equal(again.wasApplied(), false);
    });

    test(
      "empty collections: a non-frozen one is null, a frozen one an empty value",
      async () => {
        await client.execute(
          `CREATE TABLE shop.empties (id int PRIMARY KEY, m map<text, int>, fs frozen<set<int>>,
             fl frozen<list<int>>, nest map<text, frozen<list<int>>>)`,
        );
        // A non-frozen collection with no elements has no cells: null, however it was written.
        // (The driver sends {} as a map of zero entries; [] it sends as null.)
        await client.execute("INSERT INTO shop.empties (id, m) VALUES (?, ?)", [1, {}], { prepare: true });
        await client.execute("INSERT INTO shop.empties (id, m) VALUES (2, {})");
        const maps = await client.execute("SELECT id, m FROM shop.empties WHERE id IN (1, 2)");
        assert.deepEqual(
          maps.rows.map((r) => [r.id, r.m]),
          [
            [1, null],
            [2, null],
          ],
        );
        // A frozen collection is one value; empty is a value, not null.
        await client.execute("INSERT INTO shop.empties (id, fs, fl) VALUES (3, {}, [])");
        const frozen = await client.execute("SELECT fs, fl FROM shop.empties WHERE id = 3");
        assert.deepEqual({ ...frozen.first() }, { fs: [], fl: [] });
        await client.execute("INSERT INTO shop.empties (id, nest) VALUES (4, {'b': []})");
        const nested = await client.execute("SELECT nest FROM shop.empties WHERE id = 4");
        assert.deepEqual(nested.first().nest, { b: [] });
      },
    );

    test("TTL and writetime: USING TTL 1 expires; ttl() in range; writetime() is USING TIMESTAMP", async () => {
      await client.execute("CREATE TABLE shop.sessions (id text PRIMARY KEY, user text)");
      const ins = "INSERT INTO shop.sessions (id, user) VALUES (?, ?) USING TTL ? AND TIMESTAMP ?";
      const now = Long.fromNumber(Date.now() * 1000);
      const stamp = Long.fromString("1700000000123456");
      await client.execute(ins, ["s1", "ada", 1, now], { prepare: true });
      await client.execute(ins, ["s2", "bo", 3600, now], { prepare: true });
      await client.execute(ins, ["s3", "cy", 0, stamp], { prepare: true });
      const ttl = await client.execute("SELECT ttl(user) AS t FROM shop.sessions WHERE id = 's2'");
      assert.ok(ttl.first().t >= 3500 && ttl.first().t <= 3600, `ttl(user) = ${ttl.first().t}`);
      const wt = await client.execute("SELECT writetime(user) AS w, ttl(user) AS t FROM shop.sessions WHERE id = 's3'");
      assert.equal(wt.first().w.toString(), stamp.toString());
      assert.equal(wt.first().t, null, "no TTL on a row written with TTL 0");
      // An older timestamp loses to the newer one.
      await client.execute("UPDATE shop.sessions USING TIMESTAMP 1000 SET user = 'old' WHERE id = 's3'");
      const kept = await client.execute("SELECT user FROM shop.sessions WHERE id = 's3'");
      assert.equal(kept.first().user, "cy");

      await sleep(2_100);
      const expired = await client.execute("SELECT user FROM shop.sessions WHERE id = 's1'");
      assert.equal(expired.rows.length, 0, `an expired row read back: ${JSON.stringify(expired.rows)}`);
      const live = await client.execute("SELECT id FROM shop.sessions");
      assert.deepEqual(live.rows.map((r) => r.id).sort(), ["s2", "s3"]);
    });

    describe("10,000 rows over 7 physical partitions", () => {
      const ROWS = 10_000;
      const BUCKETS = 100; // partitions of 100 rows each

      before(async () => {
        await client.execute(
          `CREATE TABLE shop.events (bucket int, seq int, body text, PRIMARY KEY (bucket, seq))
             WITH cosmosdb_provisioned_throughput = 40000`,
        );
        // The table is a container of the Cosmos DB API; 40,000 RU/s gives it 7 physical partitions.
        const ranges = await rawRequest(server, { method: "GET", path: "/dbs/shop/colls/events/pkranges" });
        assert.equal(ranges.status, 200);
        assert.equal(ranges.body.PartitionKeyRanges.length, 7);
        // One unlogged batch per partition, a few at a time, retried while throttled.
        const ins = "INSERT INTO shop.events (bucket, seq, body) VALUES (?, ?, ?)";
        let next = 0;
        const worker = async () => {
          while (next < BUCKETS) {
            const bucket = next++;
            const queries = [];
            for (let seq = bucket; seq < ROWS; seq += BUCKETS) {
              queries.push({ query: ins, params: [bucket, seq, `event ${seq}`] });
            }
            await retryOverloaded(() => client.batch(queries, { prepare: true, logged: false }));
          }
        };
        await Promise.all([worker(), worker(), worker(), worker()]);
      });

      test("eachRow with autoPage: every row once, partitions in token order, rows in clustering order", async () => {
        let seen, count, lastToken, lastSeq;
        // A throttled page starts the statement again, from no rows.
        await retryOverloaded(() => {
          seen = new Uint8Array(ROWS);
          count = 0;
          lastToken = Long.MIN_VALUE;
          lastSeq = new Map();
          return new Promise((resolve, reject) => {
            client.eachRow(
              "SELECT bucket, seq, body, token(bucket) AS t FROM shop.events",
              [],
              { prepare: true, autoPage: true, fetchSize: 500 },
              (n, row) => {
                seen[row.seq]++;
                count++;
                assert.equal(row.body, `event ${row.seq}`);
                assert.equal(row.seq % BUCKETS, row.bucket);
                assert.ok(row.t.greaterThanOrEqual(lastToken), `token ${row.t} after ${lastToken}`);
                lastToken = row.t;
                assert.ok(row.seq > (lastSeq.get(row.bucket) ?? -1), `bucket ${row.bucket}: seq ${row.seq} out of order`);
                lastSeq.set(row.bucket, row.seq);
              },
              (err) => (err ? reject(err) : resolve()),
            );
          });
        });
        assert.equal(count, ROWS);
        assert.ok(seen.every((n) => n === 1), "some row was not read exactly once");
        assert.equal(lastSeq.size, BUCKETS);
      });

      test("manual paging with pageState over one partition", async () => {
        const seqs = [];
        let pageState;
        let pages = 0;
        do {
          const rs = await retryOverloaded(() =>
            client.execute("SELECT seq FROM shop.events WHERE bucket = ?", [42], {
              prepare: true,
              fetchSize: 7,
              pageState,
            }),
          );
          assert.ok(rs.rows.length <= 7);
          seqs.push(...rs.rows.map((r) => r.seq));
          pageState = rs.pageState;
          pages++;
          assert.ok(pages <= 20, "paging does not end");
        } while (pageState);
        assert.deepEqual(
          seqs,
          Array.from({ length: ROWS / BUCKETS }, (_, i) => 42 + i * BUCKETS),
        );
        assert.ok(pages >= 15, `100 rows came in ${pages} pages of 7`);

        // Paging state with a clustering slice and descending order.
        const desc = [];
        pageState = undefined;
        do {
          const rs = await retryOverloaded(() =>
            client.execute(
              "SELECT seq FROM shop.events WHERE bucket = ? AND seq >= ? ORDER BY seq DESC",
              [42, 5042],
              { prepare: true, fetchSize: 9, pageState },
            ),
          );
          desc.push(...rs.rows.map((r) => r.seq));
          pageState = rs.pageState;
        } while (pageState);
        assert.deepEqual(
          desc,
          Array.from({ length: 50 }, (_, i) => 9942 - i * BUCKETS),
        );
      });

      test("queries: IN, DISTINCT, LIMIT, PER PARTITION LIMIT, count, ALLOW FILTERING", async () => {
        const q = async (stmt, params = []) =>
          (await retryOverloaded(() => client.execute(stmt, params, { prepare: true }))).rows;
        const distinct = await q("SELECT DISTINCT bucket FROM shop.events");
        assert.deepEqual(
          distinct.map((r) => r.bucket).sort((a, b) => a - b),
          Array.from({ length: BUCKETS }, (_, i) => i),
        );
        const inPk = await q("SELECT bucket, seq FROM shop.events WHERE bucket IN ? AND seq < 500", [[1, 2, 3]]);
        assert.deepEqual(
          inPk.map((r) => r.seq).sort((a, b) => a - b),
          [1, 2, 3, 101, 102, 103, 201, 202, 203, 301, 302, 303, 401, 402, 403],
        );
        const inCk = await q("SELECT seq FROM shop.events WHERE bucket = ? AND seq IN (9903, 3, 103)", [3]);
        assert.deepEqual(inCk.map((r) => r.seq), [3, 103, 9903]);
        const limited = await q("SELECT seq FROM shop.events WHERE bucket = ? LIMIT 3", [7]);
        assert.deepEqual(limited.map((r) => r.seq), [7, 107, 207]);
        const perPartition = await q("SELECT bucket, seq FROM shop.events WHERE bucket IN (5, 6) PER PARTITION LIMIT 2");
        assert.deepEqual(
          perPartition.map((r) => [r.bucket, r.seq]).sort((a, b) => a[1] - b[1]),
          [
            [5, 5],
            [6, 6],
            [5, 105],
            [6, 106],
          ],
        );
        const counted = await q("SELECT count(*) AS n FROM shop.events");
        assert.equal(counted[0].n.toString(), String(ROWS));
        const inPartition = await q("SELECT count(*) AS n, max(seq) AS hi FROM shop.events WHERE bucket = ?", [9]);
        assert.equal(inPartition[0].n.toString(), "100");
        assert.equal(inPartition[0].hi, 9909);
        const filtered = await q("SELECT bucket, seq FROM shop.events WHERE body = ? ALLOW FILTERING", ["event 4242"]);
        assert.deepEqual(filtered.map((r) => [r.bucket, r.seq]), [[42, 4242]]);
        await expectCode(client.execute("SELECT seq FROM shop.events WHERE body = 'event 1'"), codes.invalid);

        // Limits and DISTINCT hold across pages.
        // A throttled page starts the statement again, from no rows.
        const paged = (stmt, fetchSize) =>
          retryOverloaded(async () => {
            const rows = [];
            await new Promise((resolve, reject) =>
              client.eachRow(
                stmt,
                [],
                { prepare: true, autoPage: true, fetchSize },
                (n, row) => rows.push(row),
                (err) => (err ? reject(err) : resolve()),
              ),
            );
            return rows;
          });
        const first1234 = await paged("SELECT seq FROM shop.events LIMIT 1234", 500);
        assert.equal(first1234.length, 1234);
        assert.equal(new Set(first1234.map((r) => r.seq)).size, 1234);
        const three = await paged("SELECT bucket, seq FROM shop.events PER PARTITION LIMIT 3", 50);
        assert.equal(three.length, 3 * BUCKETS);
        for (const row of three) {
          assert.ok(row.seq < 3 * BUCKETS, `bucket ${row.bucket}: seq ${row.seq} is not among its first 3`);
        }
        const buckets = await paged("SELECT DISTINCT bucket FROM shop.events", 7);
        assert.equal(new Set(buckets.map((r) => r.bucket)).size, BUCKETS);
        assert.equal(buckets.length, BUCKETS);
      });

      test("token ranges from the driver's metadata cover every row exactly once", async () => {
        const ranges = [...client.metadata.getTokenRanges()];
        assert.equal(ranges.length, 8, "one range per token of the node");
        const minToken = client.metadata.newToken("-9223372036854775808");
        const seen = new Uint8Array(ROWS);
        let nonEmpty = 0;
        for (const range of ranges) {
          for (const part of range.unwrap()) {
            const start = part.start.getValue();
            // (start, min] is (start, end of the ring].
            const open = part.end.equals(minToken);
            const rs = await retryOverloaded(() =>
              client.execute(
                open
                  ? "SELECT seq, token(bucket) AS t FROM shop.events WHERE token(bucket) > ?"
                  : "SELECT seq, token(bucket) AS t FROM shop.events WHERE token(bucket) > ? AND token(bucket) <= ?",
                open ? [start] : [start, part.end.getValue()],
                { prepare: true, fetchSize: 5000 },
              ),
            );
            let rows = rs.rows;
            let page = rs;
            while (page.pageState) {
              const from = page;
              page = await retryOverloaded(() => from.nextPage());
              rows = rows.concat(page.rows);
            }
            if (rows.length > 0) nonEmpty++;
            for (const row of rows) {
              assert.ok(part.contains(client.metadata.newToken(row.t.toString())), `token ${row.t} outside ${part}`);
              seen[row.seq]++;
            }
          }
        }
        assert.ok(seen.every((n) => n === 1), "some row was not read exactly once over the token ranges");
        assert.ok(nonEmpty >= 4, `only ${nonEmpty} ranges held rows`);
      });
    });

    test("throttling: a 429 is Overloaded (0x1001) ending RetryAfterMs=N", async () => {
      await client.execute(
        "CREATE TABLE shop.tiny (k int, c int, v text, PRIMARY KEY (k, c)) WITH cosmosdb_provisioned_throughput = 400",
      );
      const ins = "INSERT INTO shop.tiny (k, c, v) VALUES (?, ?, ?)";
      let overloaded;
      for (let round = 0; round < 40 && !overloaded; round++) {
        const results = await Promise.allSettled(
          Array.from({ length: 50 }, (_, i) => client.execute(ins, [1, round * 50 + i, "x".repeat(500)], { prepare: true })),
        );
        overloaded = results.find((r) => r.status === "rejected")?.reason;
      }
      assert.ok(overloaded, "2000 writes to a 400 RU/s table were never throttled");
      assert.ok(overloaded instanceof errors.ResponseError, `got ${overloaded}`);
      assert.equal(overloaded.code, codes.overloaded, overloaded.message);
      assert.match(overloaded.message, /RetryAfterMs=\d+$/);
    });
  });
}
