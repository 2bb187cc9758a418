"""Drives Partita with the Azure Cosmos Python SDK 3.x (Debian's python3-azure-cosmos), as a
new user would: databases, containers, items by name and by _self link, queries paged by
continuation, a stored procedure, and errors. Prints one JSON object of what it saw; the Go
test (e2e/python_test.go) checks it. Usage: cosmos_sdk3.py ENDPOINT KEY"""

import json
import sys

import azure.cosmos.cosmos_client as cosmos_client
import azure.cosmos.errors as errors

endpoint, key = sys.argv[1], sys.argv[2]
client = cosmos_client.CosmosClient(endpoint, {"masterKey": key})
out = {}

db = client.CreateDatabase({"id": "py"})
coll = client.CreateContainer(db["_self"], {"id": "items", "partitionKey": {"paths": ["/pk"], "kind": "Hash"}},
                              {"offerThroughput": 12000})
out["database"], out["container"] = db["id"], coll["id"]
coll_link = "dbs/py/colls/items"

for i in range(7):
    client.CreateItem(coll_link, {"id": "i%d" % i, "pk": "k%d" % (i % 2), "n": i})
out["read_by_name"] = client.ReadItem(coll_link + "/docs/i3", {"partitionKey": "k1"})["n"]

# By _self links: resource ids all the way down, signed over the lower-cased rid.
doc = client.ReadItem(coll_link + "/docs/i4", {"partitionKey": "k0"})
out["read_by_self"] = client.ReadItem(doc["_self"], {"partitionKey": "k0"})["n"]
doc["n"] = 40
out["replaced_by_self"] = client.ReplaceItem(doc["_self"], doc, {"partitionKey": "k0"})["n"]
out["read_database_by_self"] = client.ReadDatabase(db["_self"])["id"]
out["read_container_by_self"] = client.ReadContainer(coll["_self"])["id"]

# A query of two items a page: the SDK follows x-ms-continuation from page to page.
pages = client.QueryItems(coll_link, "SELECT VALUE c.n FROM c ORDER BY c.n",
                          {"enableCrossPartitionQuery": True, "maxItemCount": 2})
out["query"] = list(pages)
out["query_by_self"] = sorted(client.QueryItems(coll["_self"], "SELECT VALUE c.id FROM c WHERE c.pk = 'k1'",
                                                {"partitionKey": "k1"}))
out["session_token"] = bool(client.last_response_headers.get("x-ms-session-token"))

sproc = client.CreateStoredProcedure(coll_link, {
    "id": "count",
    "body": "function (pk) { __.chain().filter(function (d) { return d.pk == pk; }).value(function (err, feed) {"
            " if (err) throw err; getContext().getResponse().setBody(feed.length); }); }",
})
out["sproc"] = client.ExecuteStoredProcedure(sproc["_self"], ["k0"], {"partitionKey": "k0"})

try:
    client.CreateItem(coll_link, {"id": "i0", "pk": "k0"})
except errors.HTTPFailure as e:
    out["duplicate_status"] = e.status_code
try:
    client.ReadItem(coll_link + "/docs/missing", {"partitionKey": "k0"})
except errors.HTTPFailure as e:
    out["missing_status"] = e.status_code

client.DeleteItem(doc["_self"], {"partitionKey": "k0"})
out["count_after_delete"] = list(client.QueryItems(coll_link, "SELECT VALUE COUNT(1) FROM c",
                                                   {"enableCrossPartitionQuery": True}))[0]
print(json.dumps(out, sort_keys=True))
