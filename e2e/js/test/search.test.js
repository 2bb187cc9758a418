// Vector and full-text search: the policies come back as given and the service's documented
// example queries give the documented shapes, across partitions: VectorDistance ranks most
// similar first with exact scores, FullTextContains filters, ORDER BY RANK FullTextScore ranks
// by BM25, and RRF fuses both.

import assert from "node:assert/strict";
import { before, test } from "node:test";

import { expectStatus, suite, uniqueId } from "../lib/harness.js";

const cosine = (a, b) => {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    const x = Math.fround(a[i]);
    const y = Math.fround(b[i]);
    dot += x * y;
    na += x * x;
    nb += y * y;
  }
  return dot / Math.sqrt(na * nb);
};

suite("vector and full-text search", (ctx) => {
  let database;
  let container;
  const docs = [];
  const vectorEmbeddingPolicy = {
    vectorEmbeddings: [{ path: "/vector", dataType: "float32", distanceFunction: "cosine", dimensions: 3 }],
  };
  const fullTextPolicy = { defaultLanguage: "en-US", fullTextPaths: [{ path: "/text", language: "en-US" }] };
  before(async () => {
    ({ database } = await ctx.client.databases.create({ id: uniqueId("db-search") }));
    ({ container } = await database.containers.create(
      {
        id: "docs",
        partitionKey: { paths: ["/pk"] },
        vectorEmbeddingPolicy,
        fullTextPolicy,
        indexingPolicy: {
          includedPaths: [{ path: "/*" }],
          excludedPaths: [{ path: "/vector/*" }],
          vectorIndexes: [{ path: "/vector", type: "quantizedFlat" }],
          fullTextIndexes: [{ path: "/text" }],
        },
      },
      { offerThroughput: 12000 },
    ));
    const texts = [
      "document one about red bicycles",
      "a document about fast cars",
      "bicycles and cars share the road",
      "nothing relevant here",
      "red cars and red bicycles",
      "keyword keyword keyword",
    ];
    for (let i = 0; i < 30; i++) {
      const doc = {
        id: `doc${i}`,
        pk: `p${i % 7}`,
        name: `document${i}`,
        vector: [Math.sin(i + 1), Math.cos(i * 2 + 1), (i % 5) / 4],
        text: texts[i % texts.length],
      };
      docs.push(doc);
      await container.items.create(doc);
    }
  });

  test("the policies come back as given", async () => {
    const { resource } = await container.read();
    assert.deepEqual(resource.vectorEmbeddingPolicy, vectorEmbeddingPolicy);
    assert.deepEqual(resource.fullTextPolicy, fullTextPolicy);
    assert.deepEqual(resource.indexingPolicy.vectorIndexes, [{ path: "/vector", type: "quantizedFlat" }]);
    assert.deepEqual(resource.indexingPolicy.fullTextIndexes, [{ path: "/text" }]);
  });

  test("a vector index on a path the range index also records is refused", async () => {
    await expectStatus(
      database.containers.create({
        id: uniqueId("bad"),
        partitionKey: { paths: ["/pk"] },
        vectorEmbeddingPolicy,
        indexingPolicy: { vectorIndexes: [{ path: "/vector", type: "flat" }] },
      }),
      400,
    );
  });

  test("the documented vector search: TOP 10, most similar first, exact scores", async () => {
    const q = [1, 2, 3];
    const { resources } = await container.items
      .query({
        query: "SELECT TOP 10 c.name, VectorDistance(c.vector, @q) AS SimilarityScore FROM c ORDER BY VectorDistance(c.vector, @q)",
        parameters: [{ name: "@q", value: q }],
      })
      .fetchAll();
    const want = docs
      .map((d) => ({ name: d.name, SimilarityScore: cosine(d.vector, q) }))
      .sort((a, b) => b.SimilarityScore - a.SimilarityScore)
      .slice(0, 10);
    assert.equal(resources.length, 10);
    resources.forEach((r, i) => {
      assert.equal(r.name, want[i].name);
      assert.ok(Math.abs(r.SimilarityScore - want[i].SimilarityScore) < 1e-9, `${r.SimilarityScore} vs ${want[i].SimilarityScore}`);
    });
  });

  test("full-text filters and BM25 ranking", async () => {
    const { resources: matches } = await container.items
      .query('SELECT VALUE c.id FROM c WHERE FullTextContains(c.text, "bicycle")')
      .fetchAll();
    const want = docs.filter((d) => d.text.includes("bicycles")).map((d) => d.id);
    assert.deepEqual([...matches].sort(), [...want].sort());
    const { resources: ranked } = await container.items
      .query('SELECT TOP 5 c.text FROM c ORDER BY RANK FullTextScore(c.text, "keyword")')
      .fetchAll();
    assert.equal(ranked.length, 5);
    assert.equal(ranked[0].text, "keyword keyword keyword");
    await expectStatus(
      container.items.query('SELECT FullTextScore(c.text, "keyword") AS s FROM c').fetchAll(),
      400,
    );
  });

  test("hybrid search fuses the two rankings", async () => {
    const { resources } = await container.items
      .query({
        query: 'SELECT TOP 10 * FROM c WHERE FullTextContains(c.text, "red") ORDER BY RANK RRF(FullTextScore(c.text, "red", "bicycle"), VectorDistance(c.vector, @q))',
        parameters: [{ name: "@q", value: [1, 2, 3] }],
      })
      .fetchAll();
    assert.ok(resources.length > 0 && resources.length <= 10);
    for (const r of resources) {
      assert.match(r.text, /red/);
    }
  });
});
