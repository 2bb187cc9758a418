// Offers: reading the throughput of containers and databases (manual and autoscale), listing
// offers, and replacing an offer to change the throughput.

import assert from "node:assert/strict";
import { before, test } from "node:test";

import { expectStatus, suite, uniqueId } from "../lib/harness.js";

suite("offers", (ctx) => {
  let database;
  before(async () => {
    ({ database } = await ctx.client.databases.create({ id: uniqueId("db-offers") }));
  });

  test("container.readOffer returns the manual throughput", async () => {
    const { container, resource: coll } = await database.containers.create({
      id: uniqueId("c"),
      partitionKey: { paths: ["/pk"] },
      throughput: 20000,
    });
    const { resource: offer, offer: ref } = await container.readOffer();
    assert.ok(offer, "no offer for a container with throughput");
    assert.equal(offer.content.offerThroughput, 20000);
    assert.equal(offer.offerResourceId, coll._rid);
    assert.equal(typeof offer.id, "string");
    assert.equal(typeof offer._self, "string");
    assert.equal(ref.id, offer.id);
  });

  test("offer.replace changes the throughput; reading again shows the new value", async () => {
    const { container } = await database.containers.create({
      id: uniqueId("c"),
      partitionKey: { paths: ["/pk"] },
      throughput: 20000,
    });
    const { resource: offer, offer: ref } = await container.readOffer();
    const replaced = await ref.replace({ ...offer, content: { offerThroughput: 25000 } });
    assert.equal(replaced.statusCode, 200);
    assert.equal(replaced.resource.content.offerThroughput, 25000);
    assert.equal(replaced.resource.id, offer.id);

    const again = await container.readOffer();
    assert.equal(again.resource.content.offerThroughput, 25000);
    const direct = await ctx.client.offer(offer.id).read();
    assert.equal(direct.resource.content.offerThroughput, 25000);
    // The container and its items are untouched.
    await container.items.create({ id: "after", pk: "p" });
    assert.equal((await container.item("after", "p").read()).statusCode, 200);
  });

  test("offer.replace with a throughput below 400 gives 400 and changes nothing", async () => {
    const { container } = await database.containers.create({
      id: uniqueId("c"),
      partitionKey: { paths: ["/pk"] },
      throughput: 1000,
    });
    const { resource: offer, offer: ref } = await container.readOffer();
    await expectStatus(ref.replace({ ...offer, content: { ...offer.content, offerThroughput: 100 } }), 400);
    assert.equal((await container.readOffer()).resource.content.offerThroughput, 1000);
  });

  test("container with autoscale: readOffer shows maxThroughput", async () => {
    const { container } = await database.containers.create({
      id: uniqueId("c"),
      partitionKey: { paths: ["/pk"] },
      maxThroughput: 4000,
    });
    const { resource: offer } = await container.readOffer();
    assert.equal(offer.content.offerAutopilotSettings?.maxThroughput, 4000, JSON.stringify(offer.content));
  });

  test("database.readOffer returns the shared throughput; a database without throughput has none", async () => {
    const { database: shared, resource: db } = await ctx.client.databases.create({
      id: uniqueId("db-shared"),
      throughput: 400,
    });
    const { resource: offer } = await shared.readOffer();
    assert.equal(offer.content.offerThroughput, 400);
    assert.equal(offer.offerResourceId, db._rid);

    const { resource: none } = await database.readOffer();
    assert.equal(none, undefined);
    // A container of a database without shared throughput and created without throughput.
    const { container } = await database.containers.create({ id: uniqueId("c"), partitionKey: { paths: ["/pk"] } });
    const { resource: own } = await container.readOffer();
    assert.ok(own === undefined || own.content.offerThroughput >= 400, JSON.stringify(own));
  });

  test("offers.readAll lists the offers", async () => {
    const { container, resource: coll } = await database.containers.create({
      id: uniqueId("c"),
      partitionKey: { paths: ["/pk"] },
      throughput: 600,
    });
    const { resources } = await ctx.client.offers.readAll().fetchAll();
    const mine = resources.find((o) => o.offerResourceId === coll._rid);
    assert.ok(mine, `no offer for ${coll._rid} in ${JSON.stringify(resources.map((o) => o.offerResourceId))}`);
    assert.equal(mine.content.offerThroughput, 600);
    assert.equal((await container.readOffer()).resource.id, mine.id);
  });
});
