"""Drives a container created without a partition key with the Azure Cosmos Python SDK 3.x
(Debian's python3-azure-cosmos), which creates collections that way unless told otherwise, as
the SDKs up to 2.x did: items created, read, replaced, upserted and deleted without naming a
partition key, queries without fan-out, a stored procedure, the change feed, and the limit on
the throughput it may be created with. Prints one JSON object of what it saw; the Go test
(e2e/nokey_test.go) checks it. Usage: cosmos_nokey.py ENDPOINT KEY"""

import json
import sys

import azure.cosmos.cosmos_client as cosmos_client
import azure.cosmos.errors as errors

endpoint, key = sys.argv[1], sys.argv[2]
client = cosmos_client.CosmosClient(endpoint, {"masterKey": key})
out = {}

db = client.CreateDatabase({"id": "legacy"})
coll = client.CreateContainer(db["_self"], {"id": "nokey"})
out["partition_key"] = coll.get("partitionKey")
link = "dbs/legacy/colls/nokey"

for i in range(5):
    client.CreateItem(link, {"id": "i%d" % i, "n": i})
out["read"] = client.ReadItem(link + "/docs/i3")["n"]
doc = client.ReadItem(link + "/docs/i4")
doc["n"] = 40
out["replaced"] = client.ReplaceItem(doc["_self"], doc)["n"]
out["upserted"] = client.UpsertItem(link, {"id": "i5", "n": 5})["n"]
client.DeleteItem(link + "/docs/i0")
out["query"] = list(client.QueryItems(link, "SELECT VALUE c.n FROM c ORDER BY c.n"))
out["count"] = list(client.QueryItems(link, "SELECT VALUE COUNT(1) FROM c"))[0]

sproc = client.CreateStoredProcedure(link, {
    "id": "total",
    "body": "function () { __.chain().map(function (d) { return d.n; }).value(function (err, ns) {"
            " if (err) throw err; getContext().getResponse().setBody(ns.reduce(function (a, b) { return a + b; }, 0)); }); }",
})
out["sproc"] = client.ExecuteStoredProcedure(sproc["_self"], [])

changes = list(client.QueryItemsChangeFeed(link, {"startFromBeginning": True}))
out["change_feed"] = sorted(d["id"] for d in changes)

try:
    client.CreateItem(link, {"id": "i1", "n": 1})
except errors.HTTPFailure as e:
    out["duplicate_status"] = e.status_code
try:
    client.CreateContainer(db["_self"], {"id": "big"}, {"offerThroughput": 20000})
except errors.HTTPFailure as e:
    out["too_much_throughput_status"] = e.status_code
print(json.dumps(out, sort_keys=True))
