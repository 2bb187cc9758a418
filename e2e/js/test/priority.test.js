// Priority-based execution: requests the SDK sends with priorityLevel Low are throttled before
// High ones when together they ask more of a partition than its throughput.

import assert from "node:assert/strict";
import { before, after, test } from "node:test";
import { PriorityLevel } from "@azure/cosmos";

import { disposeClient, newClient, rawRequest, suite, uniqueId } from "../lib/harness.js";

suite("priority", (ctx) => {
  let client, container;
  before(async () => {
    // No retries: a 429 is counted, not hidden by the SDK's waits.
    client = newClient(ctx.server, { connectionPolicy: { retryOptions: { maxRetryAttemptCount: 0 } } });
    const { database } = await client.databases.create({ id: uniqueId("db-priority") });
    ({ container } = await database.containers.create({ id: uniqueId("c"), partitionKey: { paths: ["/pk"] }, throughput: 400 }));
  });
  after(() => disposeClient(client));

  test("Low requests are throttled first under overload", async () => {
    const count = { High: { ok: 0, throttled: 0 }, Low: { ok: 0, throttled: 0 } };
    const start = Date.now() + 1500; // counted once both levels have a second's history
    const stop = start + 3000;
    const worker = async (level, w) => {
      for (let i = 0; Date.now() < stop; i++) {
        try {
          await container.items.create({ id: `${level}-${w}-${i}`, pk: `p${i % 10}` }, { priorityLevel: PriorityLevel[level] });
          if (Date.now() > start) count[level].ok++;
        } catch (e) {
          if (e.code !== 429) throw e;
          if (Date.now() > start) count[level].throttled++;
        }
      }
    };
    await Promise.all([0, 1, 2].flatMap((w) => [worker("High", w), worker("Low", w)]));
    assert.ok(count.Low.throttled > 0, `the load did not pass the budget: ${JSON.stringify(count)}`);
    assert.ok(count.High.ok > 0 && count.Low.ok * 5 <= count.High.ok, `Low was not refused first: ${JSON.stringify(count)}`);
  });

  test("a level that is neither Low nor High is refused with 400", async () => {
    await new Promise((r) => setTimeout(r, 2500)); // past the load's seconds
    const res = await rawRequest(ctx.server, {
      method: "POST", path: `/dbs/${container.database.id}/colls/${container.id}/docs`, body: { id: "m", pk: "p" },
      headers: { "x-ms-documentdb-partitionkey": '["p"]', "x-ms-cosmos-priority-level": "Medium" },
    });
    assert.equal(res.status, 400);
    const { statusCode } = await container.items.create({ id: uniqueId("plain"), pk: "p" });
    assert.equal(statusCode, 201);
  });
});
