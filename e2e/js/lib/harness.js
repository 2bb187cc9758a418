// Test harness: builds or locates the partita binary, runs `partita serve` on a free loopback
// port with a fresh data directory, and makes @azure/cosmos clients for it (and, for servers
// started with `cql: true`, cassandra-driver clients for its Cassandra API).
//
// Environment:
//   PARTITA_BIN                 use this server binary instead of building ./cmd/partita
//   PARTITA_E2E_TRANSPORTS      comma-separated subset of "http,https" to run (default: both)
//   PARTITA_E2E_LOG_LEVEL       server --log-level (default: warn)
//   PARTITA_E2E_SERVER_LOG=1    copy the server's log to this process's stderr as it runs

import { execFile, spawn } from "node:child_process";
import { createHash, createHmac } from "node:crypto";
import { existsSync, rmSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import http from "node:http";
import https from "node:https";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { after, before, describe } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

import { CosmosClient } from "@azure/cosmos";
import cassandra from "cassandra-driver";

/** The Cosmos emulator's well-known key, which is partita's default account key. */
export const ACCOUNT_KEY =
  "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw==";

/** The repository root: e2e/js/lib -> ../../.. */
export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..", "..");

const START_TIMEOUT_MS = 30_000;
const STOP_TIMEOUT_MS = 5_000;
const SUITE_TIMEOUT_MS = 120_000; // a hung request fails its suite instead of hanging the run

// ---------------------------------------------------------------------------------------------
// Child process bookkeeping: every server started here is killed when this process ends, also
// when it ends through an uncaught error or a signal.

const children = new Set();
const dataDirs = new Set();

function killAllChildren() {
  for (const child of children) {
    if (child.exitCode === null && child.signalCode === null) {
      try {
        child.kill("SIGKILL");
      } catch {
        // already gone
      }
    }
  }
  children.clear();
  for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
  dataDirs.clear();
}

process.on("exit", killAllChildren);
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) {
  process.once(signal, () => {
    killAllChildren();
    process.kill(process.pid, signal); // default action now that our handler is gone
  });
}

// ---------------------------------------------------------------------------------------------
// The server binary.

let binaryPromise;

/**
 * Returns the path of the partita binary: $PARTITA_BIN, or a `go build` of ./cmd/partita into a
 * temp directory. The directory is stable per checkout so that go can skip relinking an
 * up-to-date binary when several test files (separate processes) ask for it.
 */
export function serverBinary() {
  binaryPromise ??= (async () => {
    if (process.env.PARTITA_BIN) {
      return path.resolve(process.env.PARTITA_BIN);
    }
    const key = createHash("sha256").update(REPO_ROOT).digest("hex").slice(0, 12);
    const out = path.join(os.tmpdir(), `partita-e2e-js-${key}`, "partita");
    try {
      await promisify(execFile)("go", ["build", "-o", out, "./cmd/partita"], {
        cwd: REPO_ROOT,
        maxBuffer: 16 << 20,
      });
    } catch (err) {
      throw new Error(`go build ./cmd/partita failed in ${REPO_ROOT}:\n${err.stderr || err.message}`);
    }
    return out;
  })();
  return binaryPromise;
}

// ---------------------------------------------------------------------------------------------
// Starting and stopping a server.

const SETPRIV =
  process.platform === "linux" ? ["/usr/bin/setpriv", "/bin/setpriv"].find((p) => existsSync(p)) : undefined;

/** A free TCP port on 127.0.0.1: listen on port 0, note the port, close. */
export async function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function canConnect(port) {
  return new Promise((resolve) => {
    const sock = net.connect({ host: "127.0.0.1", port });
    sock.once("connect", () => {
      sock.destroy();
      resolve(true);
    });
    sock.once("error", () => {
      sock.destroy();
      resolve(false);
    });
  });
}

/**
 * A running `partita serve`.
 * @typedef {object} Server
 * @property {boolean} tls
 * @property {number} port
 * @property {number | undefined} cqlPort  the Cassandra API's port (servers started with cql: true)
 * @property {string} endpoint   e.g. "https://127.0.0.1:41234/"
 * @property {string} dataDir
 * @property {string | undefined} certPem  the server's self-signed certificate (TLS only)
 * @property {() => string} log  what the server has written to stderr so far (the last 256 KiB)
 * @property {() => Promise<void>} stop
 */

/**
 * Starts `partita serve` on a free loopback port with a fresh data directory and waits until the
 * port answers. args are extra flags for `partita serve` (e.g. ["--script-timeout", "1s"]).
 * With cql, the server also serves the Cassandra API on another free port (server.cqlPort);
 * without, it serves none (the API's default port is fixed, and test files run in parallel).
 * @param {{ tls: boolean, args?: string[], cql?: boolean }} options
 * @returns {Promise<Server>}
 */
export async function startServer({ tls, args = [], cql = false }) {
  const bin = await serverBinary();
  const dataDir = await mkdtemp(path.join(os.tmpdir(), "partita-e2e-data-"));
  dataDirs.add(dataDir);
  let lastError;
  // The port is free when chosen but another process could take it before the server binds:
  // try a few ports before giving up.
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort();
    const cqlPort = cql ? await freePort() : undefined;
    try {
      return await launch({ bin, dataDir, port, cqlPort, tls, extraArgs: args });
    } catch (err) {
      lastError = err;
    }
  }
  await rm(dataDir, { recursive: true, force: true });
  dataDirs.delete(dataDir);
  throw lastError;
}

async function launch({ bin, dataDir, port, cqlPort, tls, extraArgs }) {
  const args = [
    "serve",
    "--data", dataDir,
    "--addr", `127.0.0.1:${port}`,
    `--cql-addr=${cqlPort === undefined ? "" : `127.0.0.1:${cqlPort}`}`,
    `--tls=${tls}`,
    "--log-level", process.env.PARTITA_E2E_LOG_LEVEL || "warn",
    "--shutdown-timeout", "2s",
    ...extraArgs,
  ];
  // On Linux, setpriv (util-linux) execs the server with a parent-death signal, so that it
  // dies with this process even when this process is SIGKILLed and cannot clean up.
  const child = SETPRIV
    ? spawn(SETPRIV, ["--pdeathsig", "SIGKILL", "--", bin, ...args], { stdio: ["ignore", "pipe", "pipe"] })
    : spawn(bin, args, { stdio: ["ignore", "pipe", "pipe"] });
  children.add(child);

  let logText = "";
  const capture = (chunk) => {
    logText = (logText + chunk.toString()).slice(-256 * 1024);
    if (process.env.PARTITA_E2E_SERVER_LOG === "1") {
      process.stderr.write(`[partita :${port}] ${chunk}`);
    }
  };
  child.stdout.on("data", capture);
  child.stderr.on("data", capture);

  const exited = new Promise((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
  let spawnError;
  child.once("error", (err) => {
    spawnError = err;
  });

  const stop = async () => {
    const diedEarly = child.exitCode !== null || child.signalCode !== null;
    if (!diedEarly) {
      child.kill("SIGTERM");
      let timer;
      const timedOut = new Promise((resolve) => {
        timer = setTimeout(() => resolve(null), STOP_TIMEOUT_MS);
      });
      const done = await Promise.race([exited, timedOut]);
      clearTimeout(timer);
      if (done === null) {
        child.kill("SIGKILL");
        await exited;
      }
    }
    children.delete(child);
    await rm(dataDir, { recursive: true, force: true });
    dataDirs.delete(dataDir);
    if (diedEarly) {
      throw new Error(`partita serve exited during the tests (${child.exitCode ?? child.signalCode}):\n${logText}`);
    }
  };

  // Wait until the ports accept connections, or the process dies. Both listeners are bound
  // before either serves, so the CQL port is open once the REST port is; checking both costs
  // one connect.
  const deadline = Date.now() + START_TIMEOUT_MS;
  for (;;) {
    if (spawnError) {
      children.delete(child);
      throw new Error(`cannot run ${bin}: ${spawnError.message}`);
    }
    if (child.exitCode !== null || child.signalCode !== null) {
      children.delete(child);
      throw new Error(`partita serve exited early (${child.exitCode ?? child.signalCode}):\n${logText}`);
    }
    if ((await canConnect(port)) && (cqlPort === undefined || (await canConnect(cqlPort)))) break;
    if (Date.now() > deadline) {
      child.kill("SIGKILL");
      await exited;
      children.delete(child);
      throw new Error(`partita serve did not listen on port ${port} within ${START_TIMEOUT_MS} ms:\n${logText}`);
    }
    await sleep(50);
  }

  const certPem = tls ? await readFile(path.join(dataDir, "tls-cert.pem"), "utf8") : undefined;
  return {
    tls,
    port,
    cqlPort,
    endpoint: `${tls ? "https" : "http"}://127.0.0.1:${port}/`,
    dataDir,
    certPem,
    log: () => logText,
    stop,
  };
}

// ---------------------------------------------------------------------------------------------
// Clients.

/**
 * A CosmosClient for server with default options, trusting the server's own certificate over
 * TLS. Extra options (e.g. another key) are merged in.
 * @param {Server} server
 * @param {import("@azure/cosmos").CosmosClientOptions} [options]
 */
export function newClient(server, options = {}) {
  const base = { endpoint: server.endpoint, key: ACCOUNT_KEY };
  let agent;
  if (server.tls) {
    agent = new https.Agent({ ca: server.certPem, keepAlive: true });
    base.agent = agent;
  }
  const client = new CosmosClient({ ...base, ...options });
  if (agent) agents.set(client, agent);
  return client;
}

const agents = new WeakMap();

/**
 * A cassandra-driver Client for the Cassandra API of server (started with cql: true), signed in
 * as "partita" with key (default: the account key), trusting the server's own certificate over
 * TLS. Extra client options are merged in. The caller connects (or lets the first execute) and
 * must shutdown() it.
 * @param {Server} server
 * @param {{ key?: string } & import("cassandra-driver").ClientOptions} [options]
 */
export function cassandraClient(server, { key = ACCOUNT_KEY, ...options } = {}) {
  if (server.cqlPort === undefined) throw new Error("cassandraClient: the server was started without cql: true");
  const base = {
    contactPoints: [`127.0.0.1:${server.cqlPort}`],
    localDataCenter: "datacenter1",
    authProvider: new cassandra.auth.PlainTextAuthProvider("partita", key),
    socketOptions: { connectTimeout: 10_000, readTimeout: 30_000 },
  };
  if (server.tls) {
    // The certificate names 127.0.0.1, the address the driver connects to. The driver does not
    // verify certificates unless asked.
    base.sslOptions = { ca: [server.certPem], rejectUnauthorized: true };
  }
  return new cassandra.Client({ ...base, ...options });
}

/** Releases a client made by newClient: its background timers and its connections. */
export function disposeClient(client) {
  if (!client) return;
  client.dispose();
  agents.get(client)?.destroy();
}

/** The transports to run the suites over: both, or the subset in $PARTITA_E2E_TRANSPORTS. */
export function transports() {
  const all = ["http", "https"];
  const wanted = (process.env.PARTITA_E2E_TRANSPORTS || all.join(","))
    .split(",")
    .map((s) => s.trim().toLowerCase())
    .filter(Boolean);
  for (const t of wanted) {
    if (!all.includes(t)) throw new Error(`PARTITA_E2E_TRANSPORTS: unknown transport ${t}`);
  }
  return all.filter((t) => wanted.includes(t));
}

/**
 * Declares the suite once per transport. Each run gets its own server and client, started
 * before its tests and stopped after them (also when they fail); the tests reach them through
 * the ctx object passed to body: ctx.server, ctx.client. options.serverArgs are extra flags for
 * the suite's servers.
 * @param {string} name
 * @param {(ctx: { server: Server, client: CosmosClient, transport: string }) => void} body
 * @param {{ serverArgs?: string[] }} [options]
 */
export function suite(name, body, { serverArgs = [] } = {}) {
  for (const transport of transports()) {
    describe(`${name} [${transport}]`, { timeout: SUITE_TIMEOUT_MS }, () => {
      const ctx = { transport };
      before(async () => {
        ctx.server = await startServer({ tls: transport === "https", args: serverArgs });
        ctx.client = newClient(ctx.server);
      });
      after(async () => {
        disposeClient(ctx.client);
        await ctx.server?.stop();
      });
      body(ctx);
    });
  }
}

// ---------------------------------------------------------------------------------------------
// Raw REST requests, for the few server checks the SDK would stop before sending.

/**
 * Sends one master-key signed REST request and returns { status, headers, body } (body parsed
 * as JSON when it is JSON). path is the unescaped resource path, e.g. "/dbs/d/colls/c/docs";
 * each segment is percent-encoded on the wire and signed raw.
 * @param {Server} server
 * sign, when given, is the { type, link } to sign instead of those the path implies.
 * @param {{ method: string, path: string, headers?: Record<string, string>, body?: unknown, sign?: { type: string, link: string } }} req
 */
export function rawRequest(server, { method, path: resourcePath, headers = {}, body, sign }) {
  const segs = resourcePath.split("/").filter(Boolean);
  let type = "";
  let link = "";
  if (sign) {
    // The resource type and link to sign, where the path does not follow Cosmos's rules
    // (Partita's management API, /_partita/...).
    ({ type, link } = sign);
  } else if (segs.length % 2 === 1) {
    type = segs[segs.length - 1];
    link = segs.slice(0, -1).join("/");
  } else if (segs.length > 0) {
    type = segs[segs.length - 2];
    link = segs.join("/");
  }
  const date = new Date().toUTCString();
  const toSign = `${method.toLowerCase()}\n${type.toLowerCase()}\n${link}\n${date.toLowerCase()}\n\n`;
  const sig = createHmac("sha256", Buffer.from(ACCOUNT_KEY, "base64")).update(toSign).digest("base64");
  const payload = body === undefined ? undefined : Buffer.from(typeof body === "string" ? body : JSON.stringify(body));
  const reqHeaders = {
    authorization: encodeURIComponent(`type=master&ver=1.0&sig=${sig}`),
    "x-ms-date": date,
    "x-ms-version": "2020-07-15",
    accept: "application/json",
    ...(payload ? { "content-type": "application/json", "content-length": String(payload.length) } : {}),
    ...headers,
  };
  const url = new URL("/" + segs.map(encodeURIComponent).join("/"), server.endpoint);
  const transport = server.tls ? https : http;
  return new Promise((resolve, reject) => {
    const req = transport.request(
      url,
      { method, headers: reqHeaders, ...(server.tls ? { ca: server.certPem } : {}) },
      (res) => {
        const chunks = [];
        res.on("data", (c) => chunks.push(c));
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          let parsed = text;
          try {
            parsed = text ? JSON.parse(text) : undefined;
          } catch {
            // not JSON: keep the text
          }
          resolve({ status: res.statusCode, headers: res.headers, body: parsed });
        });
      },
    );
    req.on("error", reject);
    req.end(payload);
  });
}

// ---------------------------------------------------------------------------------------------
// Small helpers for tests.

let counter = 0;

/**
 * A name unique within this test file, e.g. "db-items-3". Each suite has a fresh server, so
 * names only need to differ within one file; they are the same on every run.
 */
export function uniqueId(prefix) {
  counter += 1;
  return `${prefix}-${counter}`;
}

/**
 * Awaits promise, which must reject with an SDK error of the given HTTP status (error.code).
 * Returns the error for further checks.
 */
export async function expectStatus(promise, status) {
  let result;
  try {
    result = await promise;
  } catch (err) {
    if (err?.code !== status) {
      const detail = err?.body ? ` body=${JSON.stringify(err.body)}` : "";
      err.message = `expected status ${status}, got ${err?.code}: ${err?.message}${detail}`;
      throw err;
    }
    return err;
  }
  throw new Error(`expected the request to fail with status ${status}, but it succeeded with status ${result?.statusCode}`);
}
