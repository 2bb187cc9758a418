// The Cosmos DB REST API, called from the browser and signed here with the account key, as any
// Cosmos client signs: HMAC-SHA256 over "verb\nresourcetype\nresourcelink\ndate\n\n" (verb,
// type and date in lower case), base64, in "type=master&ver=1.0&sig=..." URL-encoded. The key
// lives in this tab's sessionStorage only; it is never sent, and never put in a URL.

const STORE = 'partita.explorer.key';
const VERSION = '2020-07-15';
const enc = new TextEncoder();

let signingKey = null; // the imported CryptoKey, made from the stored key on first use

export class ApiError extends Error {
  constructor(status, code, message, charge, retryAfterMs) {
    super(message);
    this.status = status;
    this.code = code;
    this.charge = charge;
    this.retryAfterMs = retryAfterMs; // with 429: when the partition's budget renews
  }
}

// AuthError means the page has no key, or the server refused it.
export class AuthError extends Error {}

export function hasKey() {
  return sessionStorage.getItem(STORE) !== null;
}

export function forget() {
  sessionStorage.removeItem(STORE);
  signingKey = null;
}

async function importKey(b64) {
  if (!globalThis.crypto || !crypto.subtle) {
    throw new AuthError('This page needs a secure context to sign requests: open it over HTTPS, or on localhost / 127.0.0.1.');
  }
  let raw;
  try {
    raw = Uint8Array.from(atob(b64.trim()), c => c.charCodeAt(0));
  } catch {
    throw new AuthError('The key is not valid base64.');
  }
  if (raw.length === 0) throw new AuthError('The key is empty.');
  return crypto.subtle.importKey('raw', raw, {name: 'HMAC', hash: 'SHA-256'}, false, ['sign']);
}

// login checks a key by listing the databases with it, and keeps it only if the server
// accepts it.
export async function login(b64) {
  const key = await importKey(b64);
  const prev = signingKey;
  signingKey = key;
  try {
    await call('GET', ['dbs']);
  } catch (e) {
    signingKey = prev;
    if (e instanceof ApiError && (e.status === 401 || e.status === 403)) {
      throw new AuthError('The server refused this key: it is not the account key of this server.');
    }
    throw e;
  }
  sessionStorage.setItem(STORE, b64.trim());
}

async function key() {
  if (!signingKey) {
    const stored = sessionStorage.getItem(STORE);
    if (stored === null) throw new AuthError('Sign in with the account key.');
    signingKey = await importKey(stored);
  }
  return signingKey;
}

function base64(buf) {
  let s = '';
  for (const b of new Uint8Array(buf)) s += String.fromCharCode(b);
  return btoa(s);
}

// resourceOf gives the resource type and link a request is signed for, from its path segments
// (unescaped): a feed (odd count, e.g. dbs/d/colls) is typed by its last segment and linked to
// its parent; a resource by the segment before its id and linked to itself. Offers are linked
// by their id in lower case.
function resourceOf(segs) {
  if (segs.length % 2 === 1) return [segs[segs.length - 1], segs.slice(0, -1).join('/')];
  if (segs[0] === 'offers' && segs.length === 2) return ['offers', segs[1].toLowerCase()];
  return [segs[segs.length - 2], segs.join('/')];
}

async function authorization(verb, segs, date) {
  const [type, link] = resourceOf(segs);
  const payload = `${verb.toLowerCase()}\n${type.toLowerCase()}\n${link}\n${date.toLowerCase()}\n\n`;
  const sig = await crypto.subtle.sign('HMAC', await key(), enc.encode(payload));
  return encodeURIComponent(`type=master&ver=1.0&sig=${base64(sig)}`);
}

// asciiJSON writes JSON with every non-ASCII character escaped, for header values (which
// fetch takes in Latin-1 only).
export function asciiJSON(v) {
  return JSON.stringify(v).replace(/[\u007f-\uffff]/g, c => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0'));
}

// parseExact parses JSON whose integers may pass 2^53, where JSON.parse would round them (a
// cluster's node ids are 64-bit): an integer of 16 digits or more, outside a string, becomes
// its decimal string.
export function parseExact(text) {
  return JSON.parse(text.replace(/"(?:[^"\\]|\\.)*"|(?<![\w.+-])-?\d{16,}(?![\w.])/g, m => m[0] === '"' ? m : `"${m}"`));
}

// A throttled request (429) is sent again after the time the server asks, as the Cosmos SDKs
// do by default: at most 9 more times, waiting at most 30 s in all. A 429 means the request was
// not applied, so sending a write again is safe.
const THROTTLE_RETRIES = 9;
const THROTTLE_WAIT_MS = 30000;

// call sends a signed request to the resource named by segs (unescaped path segments) and
// returns {status, headers, body (parsed JSON or null), charge}. Statuses of 400 and above
// throw ApiError with the server's message (429 only once its retries are spent); 401 also
// forgets the key. under puts the path below a root that is not signed (Partita's management
// API signs the path after /_partita); exact parses the answer with parseExact.
export async function call(verb, segs, opts = {}) {
  let waited = 0;
  for (let attempt = 0; ; attempt++) {
    try {
      return await send(verb, segs, opts);
    } catch (err) {
      const wait = err.retryAfterMs || 100;
      if (!(err instanceof ApiError) || err.status !== 429 || attempt >= THROTTLE_RETRIES || waited + wait > THROTTLE_WAIT_MS) throw err;
      waited += wait;
      await new Promise(r => setTimeout(r, wait));
    }
  }
}

// send makes one attempt of call.
async function send(verb, segs, {body, headers = {}, under = '', exact = false}) {
  const date = new Date().toUTCString();
  const h = {
    'x-ms-date': date,
    'x-ms-version': VERSION,
    'authorization': await authorization(verb, segs, date),
    ...headers,
  };
  if (body !== undefined && !h['content-type']) h['content-type'] = 'application/json';
  const path = under + '/' + segs.map(encodeURIComponent).join('/');
  let resp;
  try {
    resp = await fetch(path, {method: verb, headers: h, body: body === undefined ? undefined : (typeof body === 'string' ? body : JSON.stringify(body)), cache: 'no-store', credentials: 'omit'});
  } catch (e) {
    throw new ApiError(0, 'Unreachable', `The server cannot be reached: ${e.message}`);
  }
  const charge = Number(resp.headers.get('x-ms-request-charge') || 0);
  const text = await resp.text();
  let parsed = null;
  if (text) {
    try { parsed = exact ? parseExact(text) : JSON.parse(text); } catch { parsed = {message: text}; }
  }
  if (resp.status >= 400) {
    if (resp.status === 401 && signingKey && hasKey()) {
      forget();
      window.dispatchEvent(new CustomEvent('partita:unauthorized'));
    }
    const msg = parsed && parsed.message ? parsed.message : `${resp.status} ${resp.statusText}`;
    throw new ApiError(resp.status, parsed && parsed.code, msg, charge, Number(resp.headers.get('x-ms-retry-after-ms') || 0));
  }
  return {status: resp.status, headers: resp.headers, body: parsed, charge};
}

// Resource helpers.

export const listDatabases = async () => (await call('GET', ['dbs'])).body.Databases;
export const createDatabase = (id, throughput) =>
  call('POST', ['dbs'], {body: {id}, headers: throughput ? {'x-ms-offer-throughput': String(throughput)} : {}});
export const deleteDatabase = id => call('DELETE', ['dbs', id]);

export const listContainers = async db => (await call('GET', ['dbs', db, 'colls'])).body.DocumentCollections;
export const readContainer = async (db, c) => (await call('GET', ['dbs', db, 'colls', c])).body;
export const createContainer = (db, props, throughput) =>
  call('POST', ['dbs', db, 'colls'], {body: props, headers: throughput ? {'x-ms-offer-throughput': String(throughput)} : {}});
export const replaceContainer = (db, props) => call('PUT', ['dbs', db, 'colls', props.id], {body: props});
export const deleteContainer = (db, c) => call('DELETE', ['dbs', db, 'colls', c]);

// offerFor finds the offer of a resource by its _rid, or null when it has none (a container
// in a database with shared throughput).
export async function offerFor(rid) {
  const offers = (await call('GET', ['offers'])).body.Offers;
  return offers.find(o => o.offerResourceId === rid) || null;
}
export const replaceOffer = offer => call('PUT', ['offers', offer.id], {body: offer});

// partitionKeyOf returns the partition key header value of an item under a key definition:
// one value per path, {} for a path the item does not have (the "undefined" key).
export function partitionKeyOf(item, pkdef) {
  return pkdef.paths.map(p => {
    let v = item;
    for (const part of p.split('/').slice(1)) {
      if (v === null || typeof v !== 'object' || !(part in v)) return {};
      v = v[part];
    }
    return v;
  });
}

const pkHeader = (item, pkdef) => ({'x-ms-documentdb-partitionkey': asciiJSON(partitionKeyOf(item, pkdef))});

export const upsertItem = (db, c, pkdef, item) =>
  call('POST', ['dbs', db, 'colls', c, 'docs'], {body: item, headers: {...pkHeader(item, pkdef), 'x-ms-documentdb-is-upsert': 'true'}});
export const createItem = (db, c, pkdef, item) =>
  call('POST', ['dbs', db, 'colls', c, 'docs'], {body: item, headers: pkHeader(item, pkdef)});
export const replaceItem = (db, c, pkdef, original, item) =>
  call('PUT', ['dbs', db, 'colls', c, 'docs', original.id], {body: item, headers: pkHeader(original, pkdef)});
export const deleteItem = (db, c, pkdef, item) =>
  call('DELETE', ['dbs', db, 'colls', c, 'docs', item.id], {headers: pkHeader(item, pkdef)});

// query runs one page of a query over the whole container. It returns the page's results,
// the continuation for the next page (null at the end), the charge and the query metrics.
export async function query(db, c, text, {maxItems = 100, continuation = null, parameters = []} = {}) {
  const headers = {
    'content-type': 'application/query+json',
    'x-ms-documentdb-isquery': 'true',
    'x-ms-documentdb-query-enablecrosspartition': 'true',
    'x-ms-documentdb-populatequerymetrics': 'true',
    'x-ms-max-item-count': String(maxItems),
  };
  if (continuation) headers['x-ms-continuation'] = continuation;
  const r = await call('POST', ['dbs', db, 'colls', c, 'docs'], {body: {query: text, parameters}, headers});
  return {
    results: r.body.Documents,
    continuation: r.headers.get('x-ms-continuation'),
    charge: r.charge,
    metrics: parseMetrics(r.headers.get('x-ms-documentdb-query-metrics')),
  };
}

function parseMetrics(h) {
  const out = {};
  for (const part of (h || '').split(';')) {
    const [k, v] = part.split('=');
    if (k) out[k] = v;
  }
  return out;
}

export const partitions = async (db, c) => (await call('GET', ['dbs', db, 'colls', c, 'partitions'])).body;
export const advice = async (db, c) => (await call('GET', ['dbs', db, 'colls', c, 'advice'])).body;
export const pkranges = async (db, c) => (await call('GET', ['dbs', db, 'colls', c, 'pkranges'])).body.PartitionKeyRanges;

// Partita's management API (internal/api/cosmos/manage.go): this node, the live nodes and this
// node's replicas, signed as type "cluster" with link ""; and a drain, or its cancellation, of
// the node at a cluster address, signed with link "cluster/drain".
export const clusterStatus = async () => (await call('GET', ['cluster'], {under: '/_partita', exact: true})).body;
export const drain = (node, cancel) => call('POST', ['cluster', 'drain'], {under: '/_partita', body: {node, cancel}, exact: true});
