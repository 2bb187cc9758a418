// Account: GET / through client.getDatabaseAccount(), and key authentication.

import assert from "node:assert/strict";
import { test } from "node:test";

import { disposeClient, expectStatus, newClient, suite } from "../lib/harness.js";

suite("account", (ctx) => {
  test("getDatabaseAccount returns the account with reachable locations", async () => {
    const response = await ctx.client.getDatabaseAccount();
    assert.equal(response.statusCode, 200);
    const account = response.resource;
    assert.ok(account, "no account in the response");
    assert.ok(account.writableLocations.length >= 1, "no writable location");
    assert.ok(account.readableLocations.length >= 1, "no readable location");
    for (const loc of [...account.writableLocations, ...account.readableLocations]) {
      assert.equal(typeof loc.name, "string");
      // The SDK sends its requests to these endpoints: they must be this server.
      const url = new URL(loc.databaseAccountEndpoint);
      assert.equal(url.protocol, ctx.transport + ":");
      assert.equal(url.port, String(ctx.server.port));
    }
    assert.equal(account.enableMultipleWritableLocations, false);
    assert.ok(account.consistencyPolicy, "no default consistency level");
  });

  test("a client with the wrong key is refused with 401", async () => {
    const wrongKey = Buffer.alloc(64, 7).toString("base64");
    const client = newClient(ctx.server, { key: wrongKey });
    try {
      await expectStatus(client.getDatabaseAccount(), 401);
      await expectStatus(client.database("any").read(), 401);
    } finally {
      disposeClient(client);
    }
  });
});
