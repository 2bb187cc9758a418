// Queries: single-partition and cross-partition SQL queries over a container with several
// physical partitions (parameters, paging, ORDER BY, aggregates, GROUP BY, DISTINCT, TOP,
// OFFSET/LIMIT, JOIN, built-in functions, errors), and queries over databases and containers.

import assert from "node:assert/strict";
import { before, test } from "node:test";

import { expectStatus, suite, uniqueId } from "../lib/harness.js";

const N = 60; // items
const KEYS = 12; // logical partitions
const COLORS = ["red", "green", "blue"];

const pad = (i) => String(i).padStart(2, "0");

/** The i-th test item; the test expectations below are computed from the same function. */
function makeItem(i) {
  const item = {
    id: `q${pad(i)}`,
    pk: `k${pad(i % KEYS)}`,
    n: i,
    color: COLORS[i % 3],
    score: (i * 7) % 10, // every score 0..9 six times
    name: i % 2 ? `Alpha ${i}` : `beta ${i}`,
    tags: [`t${i % 5}`, "all"],
    children: [{ c: i % 4 }, { c: (i + 1) % 4 }],
  };
  if (i % 10 === 0) item.opt = { x: i };
  return item;
}

const ITEMS = Array.from({ length: N }, (_, i) => makeItem(i));
const ids = (items) => items.map((it) => it.id);
const sorted = (xs) => [...xs].sort();

/**
 * Runs a query iterator to the end with fetchNext; returns the pages' results. Fails instead of
 * looping forever when the continuation never ends.
 */
async function fetchPages(iterator, maxPages = 200) {
  const pages = [];
  while (iterator.hasMoreResults()) {
    if (pages.length >= maxPages) throw new Error(`more than ${maxPages} pages: the query does not end`);
    const page = await iterator.fetchNext();
    pages.push(page.resources ?? []);
  }
  return pages;
}

/** Asserts that every page holds at most max results. */
function assertPageSizes(pages, max) {
  for (const p of pages) assert.ok(p.length <= max, `page of ${p.length} > maxItemCount ${max}`);
}

suite("queries", (ctx) => {
  let database;
  let container; // /pk, 4 physical partitions, ITEMS

  before(async () => {
    ({ database } = await ctx.client.databases.create({ id: uniqueId("db-queries") }));
    ({ container } = await database.containers.create({
      id: "q",
      partitionKey: { paths: ["/pk"] },
      throughput: 20000, // 4 physical partitions
      indexingPolicy: {
        // Cosmos needs a composite index for ORDER BY on two properties.
        compositeIndexes: [
          [
            { path: "/score", order: "ascending" },
            { path: "/n", order: "descending" },
          ],
        ],
      },
    }));
    for (let i = 0; i < N; i += 10) {
      await Promise.all(ITEMS.slice(i, i + 10).map((it) => container.items.create(it)));
    }
  });

  test("the container has 4 partition key ranges", async () => {
    const { resources } = await container.readPartitionKeyRanges().fetchAll();
    assert.equal(resources.length, 4, JSON.stringify(resources.map((r) => [r.minInclusive, r.maxExclusive])));
  });

  // ---- single partition ----------------------------------------------------------------------

  test("single-partition query with the partitionKey option and a parameter", async () => {
    const { resources } = await container.items
      .query(
        { query: "SELECT * FROM c WHERE c.n >= @min", parameters: [{ name: "@min", value: 20 }] },
        { partitionKey: "k03" },
      )
      .fetchAll();
    const expected = ITEMS.filter((it) => it.pk === "k03" && it.n >= 20);
    assert.deepEqual(sorted(ids(resources)), ids(expected));
    assert.deepEqual(resources.find((r) => r.id === "q27")?.tags, ["t2", "all"]);
    for (const r of resources) assert.equal(typeof r._etag, "string", "SELECT * returns system properties");
  });

  test("single-partition query with string, array and object parameters", async () => {
    const { resources } = await container.items
      .query(
        {
          query:
            "SELECT VALUE c.id FROM c WHERE c.color = @color AND ARRAY_CONTAINS(@ns, c.n) AND c.children[0] = @child",
          parameters: [
            { name: "@color", value: "red" },
            { name: "@ns", value: [0, 12, 24, 36, 48, 5] },
            { name: "@child", value: { c: 0 } },
          ],
        },
        { partitionKey: "k00" },
      )
      .fetchAll();
    // k00 holds 0, 12, 24, 36, 48; red is n % 3 == 0 (all of them); children[0].c == n % 4 == 0.
    assert.deepEqual(
      sorted(resources),
      ["q00", "q12", "q24", "q36", "q48"].filter((id) => Number(id.slice(1)) % 4 === 0),
    );
  });

  test("single-partition ORDER BY pages with maxItemCount and resumes from a continuation", async () => {
    const query = "SELECT c.id, c.n FROM c ORDER BY c.n DESC";
    const expected = ITEMS.filter((it) => it.pk === "k05")
      .map((it) => it.n)
      .sort((a, b) => b - a);
    const pages = await fetchPages(container.items.query(query, { partitionKey: "k05", maxItemCount: 2 }));
    assertPageSizes(pages, 2);
    assert.deepEqual(
      pages.flat().map((r) => r.n),
      expected,
    );

    const first = await container.items.query(query, { partitionKey: "k05", maxItemCount: 2 }).fetchNext();
    assert.deepEqual(
      first.resources.map((r) => r.n),
      expected.slice(0, 2),
    );
    assert.ok(first.continuationToken, "no continuation after the first page");
    const rest = await fetchPages(
      container.items.query(query, {
        partitionKey: "k05",
        maxItemCount: 2,
        continuationToken: first.continuationToken,
      }),
    );
    assert.deepEqual(
      rest.flat().map((r) => r.n),
      expected.slice(2),
    );
  });

  test("a query with no match returns no results", async () => {
    const { resources } = await container.items
      .query({ query: "SELECT * FROM c WHERE c.n = @n", parameters: [{ name: "@n", value: 1000 }] })
      .fetchAll();
    assert.deepEqual(resources, []);
  });

  // ---- cross partition ----------------------------------------------------------------------

  test("cross-partition query with fetchAll returns every match", async () => {
    const { resources } = await container.items
      .query({ query: "SELECT * FROM c WHERE c.color = @color", parameters: [{ name: "@color", value: "blue" }] })
      .fetchAll();
    assert.deepEqual(sorted(ids(resources)), ids(ITEMS.filter((it) => it.color === "blue")));
  });

  test("cross-partition query with maxItemCount: 3 and fetchNext returns every item exactly once", async () => {
    const pages = await fetchPages(container.items.query("SELECT * FROM c", { maxItemCount: 3 }));
    assertPageSizes(pages, 3);
    const seen = ids(pages.flat());
    assert.equal(new Set(seen).size, seen.length, `an item came twice: ${JSON.stringify(pages.map(ids))}`);
    assert.deepEqual(sorted(seen), ids(ITEMS));
    assert.ok(pages.length >= N / 3, `60 items in pages of 3 need 20 pages, got ${pages.length}`);
  });

  test("cross-partition query resumes from a continuation token in a new iterator", async () => {
    for (const query of ["SELECT c.id, c.n FROM c", "SELECT c.id, c.n FROM c ORDER BY c.n DESC"]) {
      const first = await container.items.query(query, { maxItemCount: 8 }).fetchNext();
      assert.equal(first.resources.length, 8, query);
      assert.ok(first.continuationToken, `no continuation after the first page of ${query}`);
      const rest = await fetchPages(
        container.items.query(query, { maxItemCount: 8, continuationToken: first.continuationToken }),
      );
      const seen = [...first.resources, ...rest.flat()];
      assert.deepEqual(sorted(ids(seen)), ids(ITEMS), query);
      if (query.includes("ORDER BY"))
        assert.deepEqual(
          seen.map((r) => r.n),
          ITEMS.map((it) => it.n).reverse(),
        );
    }
  });

  test("cross-partition projection with a computed property", async () => {
    const { resources } = await container.items
      .query("SELECT c.id, c.n * 2 AS twice, c.children[1].c AS second FROM c WHERE c.n < 4")
      .fetchAll();
    assert.deepEqual(
      resources.sort((a, b) => a.id.localeCompare(b.id)),
      [0, 1, 2, 3].map((i) => ({ id: `q${pad(i)}`, twice: 2 * i, second: (i + 1) % 4 })),
    );
  });

  // ---- ORDER BY -----------------------------------------------------------------------------

  test("cross-partition ORDER BY ASC in pages of 5 is globally ordered", async () => {
    const pages = await fetchPages(
      container.items.query("SELECT c.id, c.n FROM c ORDER BY c.n ASC", { maxItemCount: 5 }),
    );
    assertPageSizes(pages, 5);
    assert.deepEqual(
      pages.flat().map((r) => r.n),
      ITEMS.map((it) => it.n),
    );
  });

  test("cross-partition ORDER BY DESC on a string in pages of 4 is globally ordered", async () => {
    const pages = await fetchPages(
      container.items.query("SELECT c.id, c.name FROM c WHERE c.n >= 30 ORDER BY c.name DESC", { maxItemCount: 4 }),
    );
    assertPageSizes(pages, 4);
    const expected = ITEMS.filter((it) => it.n >= 30)
      .map((it) => it.name)
      .sort()
      .reverse();
    assert.deepEqual(
      pages.flat().map((r) => r.name),
      expected,
    );
  });

  test("cross-partition ORDER BY on two keys (ASC, DESC) in pages of 7 is globally ordered", async () => {
    const pages = await fetchPages(
      container.items.query("SELECT c.id, c.score, c.n FROM c ORDER BY c.score ASC, c.n DESC", { maxItemCount: 7 }),
    );
    assertPageSizes(pages, 7);
    const expected = [...ITEMS].sort((a, b) => a.score - b.score || b.n - a.n).map((it) => [it.score, it.n]);
    assert.deepEqual(
      pages.flat().map((r) => [r.score, r.n]),
      expected,
    );
  });

  // ---- aggregates, GROUP BY, DISTINCT, TOP, OFFSET/LIMIT -------------------------------------

  test("SELECT VALUE COUNT(1), over the container and with a filter", async () => {
    const all = await container.items.query("SELECT VALUE COUNT(1) FROM c").fetchAll();
    assert.deepEqual(all.resources, [N]);
    const some = await container.items
      .query({ query: "SELECT VALUE COUNT(1) FROM c WHERE c.score = @s", parameters: [{ name: "@s", value: 3 }] })
      .fetchAll();
    assert.deepEqual(some.resources, [ITEMS.filter((it) => it.score === 3).length]);
    const one = await container.items.query("SELECT VALUE COUNT(1) FROM c", { partitionKey: "k07" }).fetchAll();
    assert.deepEqual(one.resources, [N / KEYS]);
  });

  test("SUM, AVG, MIN, MAX across partitions", async () => {
    const total = ITEMS.reduce((s, it) => s + it.n, 0);
    const value = async (q) => (await container.items.query(q).fetchAll()).resources;
    assert.deepEqual(await value("SELECT VALUE SUM(c.n) FROM c"), [total]);
    assert.deepEqual(await value("SELECT VALUE AVG(c.n) FROM c"), [total / N]);
    assert.deepEqual(await value("SELECT VALUE MIN(c.n) FROM c"), [0]);
    assert.deepEqual(await value("SELECT VALUE MAX(c.n) FROM c"), [N - 1]);
    assert.deepEqual(await value("SELECT VALUE MAX(c.name) FROM c"), [
      ITEMS.map((it) => it.name)
        .sort()
        .at(-1),
    ]);
  });

  test("several aggregates in one SELECT (not VALUE)", async () => {
    const { resources } = await container.items
      .query("SELECT COUNT(1) AS cnt, SUM(c.n) AS total, MIN(c.score) AS lo, MAX(c.score) AS hi FROM c")
      .fetchAll();
    assert.deepEqual(resources, [{ cnt: N, total: ITEMS.reduce((s, it) => s + it.n, 0), lo: 0, hi: 9 }]);
  });

  test("GROUP BY across partitions", async () => {
    const { resources } = await container.items
      .query("SELECT c.color, COUNT(1) AS cnt, SUM(c.n) AS total FROM c GROUP BY c.color")
      .fetchAll();
    const expected = COLORS.map((color) => {
      const group = ITEMS.filter((it) => it.color === color);
      return { color, cnt: group.length, total: group.reduce((s, it) => s + it.n, 0) };
    });
    const byColor = (a, b) => a.color.localeCompare(b.color);
    assert.deepEqual([...resources].sort(byColor), expected.sort(byColor));
  });

  test("DISTINCT across partitions", async () => {
    const values = await container.items.query("SELECT DISTINCT VALUE c.color FROM c").fetchAll();
    assert.deepEqual(sorted(values.resources), sorted(COLORS));
    const objects = await container.items.query("SELECT DISTINCT c.score FROM c WHERE c.score < 3").fetchAll();
    assert.deepEqual(objects.resources.map((r) => r.score).sort(), [0, 1, 2], JSON.stringify(objects.resources));
  });

  test("TOP across partitions, with and without ORDER BY", async () => {
    const ordered = await container.items.query("SELECT TOP 5 c.n FROM c ORDER BY c.n DESC").fetchAll();
    assert.deepEqual(
      ordered.resources.map((r) => r.n),
      [59, 58, 57, 56, 55],
    );
    const any = await container.items.query("SELECT TOP 7 c.id FROM c", { maxItemCount: 3 }).fetchAll();
    assert.equal(any.resources.length, 7);
    assert.equal(new Set(ids(any.resources)).size, 7);
    const param = await container.items
      .query({ query: "SELECT TOP @k VALUE c.n FROM c ORDER BY c.n", parameters: [{ name: "@k", value: 3 }] })
      .fetchAll();
    assert.deepEqual(param.resources, [0, 1, 2]);
  });

  test("OFFSET/LIMIT with ORDER BY across partitions", async () => {
    const { resources } = await container.items
      .query("SELECT VALUE c.n FROM c ORDER BY c.n OFFSET 10 LIMIT 5", { maxItemCount: 2 })
      .fetchAll();
    assert.deepEqual(resources, [10, 11, 12, 13, 14]);
    const tail = await container.items.query("SELECT VALUE c.n FROM c ORDER BY c.n OFFSET 57 LIMIT 10").fetchAll();
    assert.deepEqual(tail.resources, [57, 58, 59]);
  });

  // ---- queries the SDK plans ------------------------------------------------------------------

  // The .NET and Java SDKs plan every cross-partition query: they ask for the query plan, run
  // its rewrittenQuery on each range and merge the results themselves. forceQueryPlan makes
  // this SDK do the same; the results must be those of the query sent whole.
  const PLANNED = [
    { query: "SELECT * FROM c ORDER BY c.n", compare: "order" },
    { query: "SELECT c.id, c.n FROM c ORDER BY c.n DESC", compare: "order" },
    { query: "SELECT c.score, c.n FROM c ORDER BY c.score, c.n DESC", compare: "order" },
    { query: "SELECT VALUE c.name FROM c WHERE c.n > 10 ORDER BY c.name DESC", compare: "order" },
    { query: "SELECT TOP 5 c.n FROM c ORDER BY c.n DESC", compare: "order" },
    { query: "SELECT VALUE c.n FROM c ORDER BY c.n OFFSET 10 LIMIT 5", compare: "order" },
    // (Not on c.score: the SDK drops 0, and every falsy value, from an ordered DISTINCT.)
    { query: "SELECT DISTINCT VALUE c.color FROM c ORDER BY c.color DESC", compare: "order" },
    { query: "SELECT DISTINCT TOP 2 VALUE c.color FROM c ORDER BY c.color", compare: "order" },
    { query: "SELECT VALUE COUNT(1) FROM c", compare: "set" },
    { query: "SELECT VALUE COUNT(1) FROM c WHERE c.n > 1000", compare: "set" },
    { query: "SELECT VALUE SUM(c.n) FROM c", compare: "set" },
    { query: "SELECT VALUE AVG(c.n) FROM c WHERE c.color = 'red'", compare: "set" },
    { query: "SELECT VALUE MIN(c.n) FROM c", compare: "set" },
    { query: "SELECT VALUE MAX(c.name) FROM c", compare: "set" },
    { query: "SELECT VALUE MAX(c.n) FROM c WHERE c.n > 1000", compare: "set" },
    { query: "SELECT COUNT(1) AS cnt, SUM(c.n) AS total, MIN(c.score) AS lo, MAX(c.score) AS hi, AVG(c.n) AS mean FROM c", compare: "set" },
    { query: "SELECT c.color, COUNT(1) AS cnt, SUM(c.n) AS total, MAX(c.name) AS last FROM c GROUP BY c.color", compare: "set" },
    { query: "SELECT VALUE COUNT(1) FROM c GROUP BY c.score", compare: "set" },
    { query: "SELECT VALUE c.color FROM c GROUP BY c.color", compare: "set" },
    { query: "SELECT DISTINCT VALUE c.color FROM c", compare: "set" },
    { query: "SELECT DISTINCT c.score FROM c WHERE c.score < 3", compare: "set" },
    { query: "SELECT c.id, t AS tag FROM c JOIN t IN c.tags WHERE t != 'all'", compare: "set" },
    { query: "SELECT VALUE c.n FROM c OFFSET 5 LIMIT 100", compare: "count" },
    { query: "SELECT TOP 7 c.id FROM c", compare: "count" },
  ];
  for (const { query, compare } of PLANNED) {
    test(`planned by the SDK, range by range: ${query}`, async () => {
      const whole = (await container.items.query(query).fetchAll()).resources;
      const planned = (await container.items.query(query, { forceQueryPlan: true, maxItemCount: 4 }).fetchAll())
        .resources;
      const json = (xs) => xs.map((x) => JSON.stringify(x));
      if (compare === "order") {
        assert.deepEqual(planned, whole);
      } else if (compare === "set") {
        assert.deepEqual(json(planned).sort(), json(whole).sort());
      } else {
        assert.equal(planned.length, whole.length);
        assert.equal(new Set(json(planned)).size, planned.length, "a result twice");
      }
    });
  }

  // On one key: on two, the SDK resumes with a filter that ANDs the keys' conditions, which
  // skips rows (docs/compatibility.md, Known SDK issues).
  test("planned by the SDK: an ORDER BY resumes from a continuation token in a new iterator", async () => {
    const query = "SELECT c.id, c.score, c.n FROM c ORDER BY c.n DESC";
    const whole = (await container.items.query(query).fetchAll()).resources;
    const options = { enableQueryControl: true, forceQueryPlan: true, maxItemCount: 7 };
    const first = await container.items.query(query, options).fetchNext();
    assert.ok(first.resources.length > 0 && first.continuationToken, "a first page and a continuation");
    const rest = await fetchPages(container.items.query(query, { ...options, continuationToken: first.continuationToken }));
    assert.deepEqual([...first.resources, ...rest.flat()], whole);
  });

  test("planned by the SDK: a query whose ranges cannot be merged gives 400", async () => {
    const err = await expectStatus(
      container.items.query("SELECT VALUE COUNT(1) + 1 FROM c", { forceQueryPlan: true }).fetchAll(),
      400,
    );
    assert.match(err.message, /cannot be merged/);
  });

  // ---- JOIN and built-in functions -----------------------------------------------------------

  test("JOIN with IN over an array property", async () => {
    const { resources } = await container.items
      .query({
        query: "SELECT c.id, t AS tag FROM c JOIN t IN c.tags WHERE t = @tag",
        parameters: [{ name: "@tag", value: "t2" }],
      })
      .fetchAll();
    const expected = ITEMS.filter((it) => it.tags.includes("t2")).map((it) => ({ id: it.id, tag: "t2" }));
    assert.deepEqual(
      resources.sort((a, b) => a.id.localeCompare(b.id)),
      expected,
    );

    const pairs = await container.items.query("SELECT VALUE COUNT(1) FROM c JOIN ch IN c.children").fetchAll();
    assert.deepEqual(pairs.resources, [2 * N]);
    const zeros = await container.items
      .query("SELECT VALUE c.id FROM c JOIN ch IN c.children WHERE ch.c = 0 AND c.pk = 'k01'")
      .fetchAll();
    // k01 holds 1, 13, 25, 37, 49: children are n % 4 and (n + 1) % 4
    const expectedZeros = ITEMS.filter((it) => it.pk === "k01" && it.children.some((ch) => ch.c === 0));
    assert.deepEqual(sorted(zeros.resources), ids(expectedZeros));
  });

  test("built-in functions: LOWER, CONTAINS, ARRAY_CONTAINS, IS_DEFINED", async () => {
    const run = async (q) => sorted((await container.items.query(q).fetchAll()).resources);
    assert.deepEqual(
      await run("SELECT VALUE c.id FROM c WHERE CONTAINS(LOWER(c.name), 'alpha 1')"),
      ids(ITEMS.filter((it) => it.name.toLowerCase().includes("alpha 1"))),
    );
    assert.deepEqual(await run("SELECT VALUE c.id FROM c WHERE CONTAINS(c.name, 'ALPHA', true) AND c.n < 10"), [
      "q01",
      "q03",
      "q05",
      "q07",
      "q09",
    ]);
    assert.deepEqual(
      await run("SELECT VALUE c.id FROM c WHERE ARRAY_CONTAINS(c.tags, 't4')"),
      ids(ITEMS.filter((it) => it.tags.includes("t4"))),
    );
    assert.deepEqual(
      await run("SELECT VALUE c.id FROM c WHERE ARRAY_CONTAINS(c.children, {c: 3}, true) AND c.n < 8"),
      ids(ITEMS.filter((it) => it.n < 8 && it.children.some((ch) => ch.c === 3))),
    );
    assert.deepEqual(
      await run("SELECT VALUE c.id FROM c WHERE IS_DEFINED(c.opt)"),
      ids(ITEMS.filter((it) => "opt" in it)),
    );
    assert.equal((await run("SELECT VALUE c.id FROM c WHERE NOT IS_DEFINED(c.opt)")).length, N - N / 10);
    assert.deepEqual(await run("SELECT VALUE LOWER(c.name) FROM c WHERE c.n IN (1, 2)"), ["alpha 1", "beta 2"]);
  });

  // ---- errors -------------------------------------------------------------------------------

  test("a query that does not parse gives 400 BadRequest (cross-partition and single-partition)", async () => {
    for (const options of [{}, { partitionKey: "k01" }]) {
      const err = await expectStatus(container.items.query("SELECT * FROM c WHERE", options).fetchAll(), 400);
      assert.equal(err.body?.code, "BadRequest", JSON.stringify(err.body));
      assert.equal(typeof err.body?.message, "string");
    }
    await expectStatus(container.items.query("SELEKT * FROM c").fetchAll(), 400);
  });

  test("a call of an unknown function gives 400", async () => {
    await expectStatus(container.items.query("SELECT VALUE NO_SUCH_FUNCTION(c.n) FROM c").fetchAll(), 400);
  });

  test("the forms the GROUP BY documentation rules out give 400, their neighbours run", async () => {
    for (const options of [{}, { partitionKey: "k01" }]) {
      for (const q of [
        "SELECT VALUE COUNT(1) FROM (SELECT c.pk FROM c GROUP BY c.pk) x",
        "SELECT c.pk FROM c GROUP BY c.pk ORDER BY c.pk",
        "SELECT VALUE COUNT(1) FROM c GROUP BY 1",
      ]) {
        const err = await expectStatus(container.items.query(q, options).fetchAll(), 400);
        assert.equal(err.body?.code, "BadRequest", `${q}: ${JSON.stringify(err.body)}`);
      }
    }
    const { resources } = await container.items.query("SELECT x.pk FROM (SELECT c.pk FROM c GROUP BY c.pk) x", { partitionKey: "k01" }).fetchAll();
    assert.deepEqual(resources, [{ pk: "k01" }]);
  });

  // ---- readAll ------------------------------------------------------------------------------

  test("items.readAll().fetchAll() (SELECT * from c) returns every item", async () => {
    const { resources } = await container.items.readAll().fetchAll();
    assert.deepEqual(sorted(ids(resources)), ids(ITEMS));
  });

  test("items.readAll({ maxItemCount: 7 }) pages through every item once", async () => {
    const pages = await fetchPages(container.items.readAll({ maxItemCount: 7 }));
    assertPageSizes(pages, 7);
    const seen = ids(pages.flat());
    assert.equal(new Set(seen).size, seen.length);
    assert.deepEqual(sorted(seen), ids(ITEMS));
  });

  // ---- databases and containers -------------------------------------------------------------

  test("databases.query with a parameter", async () => {
    const other = uniqueId("db-queries-other");
    await ctx.client.databases.create({ id: other });
    const { resources } = await ctx.client.databases
      .query({ query: "SELECT * FROM root r WHERE r.id = @id", parameters: [{ name: "@id", value: database.id }] })
      .fetchAll();
    assert.equal(resources.length, 1, JSON.stringify(resources));
    assert.equal(resources[0].id, database.id);
    assert.equal(typeof resources[0]._rid, "string");
    const all = await ctx.client.databases.query("SELECT VALUE r.id FROM root r").fetchAll();
    assert.deepEqual(sorted(all.resources), sorted([database.id, other]));
  });

  test("containers.query with a parameter", async () => {
    const extra = uniqueId("c-extra");
    await database.containers.create({ id: extra, partitionKey: { paths: ["/other"] } });
    const { resources } = await database.containers
      .query({ query: "SELECT * FROM root r WHERE r.id = @id", parameters: [{ name: "@id", value: extra }] })
      .fetchAll();
    assert.equal(resources.length, 1, JSON.stringify(resources));
    assert.equal(resources[0].id, extra);
    assert.deepEqual(resources[0].partitionKey.paths, ["/other"]);
    const all = await database.containers.query("SELECT VALUE r.id FROM root r").fetchAll();
    assert.deepEqual(sorted(all.resources), sorted(["q", extra]));
  });
});
