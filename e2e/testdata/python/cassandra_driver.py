"""Drives Partita's Cassandra API with the DataStax Python driver (Debian's python3-cassandra,
the driver cqlsh is built on), as cqlsh and new users do: connect (negotiating the protocol
version down to 4), write and read, USE a system keyspace and read its tables' descriptions,
DESCRIBE on the server (as cqlsh 6 sends it) and run the CREATE statement it returns, and the
driver's own metadata. Prints one JSON object; e2e/python_test.go checks it.
Usage: cassandra_driver.py HOST PORT KEY"""

import json
import logging
import sys

from cassandra.auth import PlainTextAuthProvider
from cassandra.cluster import Cluster
from cassandra.policies import RoundRobinPolicy

logging.basicConfig(level=logging.ERROR)
host, port, key = sys.argv[1], int(sys.argv[2]), sys.argv[3]
cluster = Cluster([host], port=port, auth_provider=PlainTextAuthProvider("partita", key),
                  load_balancing_policy=RoundRobinPolicy())
session = cluster.connect()
out = {"release_version": session.execute("SELECT release_version FROM system.local").one().release_version}

session.execute("CREATE KEYSPACE shop WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
session.execute("CREATE TABLE shop.orders (customer text, placed int, item text, PRIMARY KEY (customer, placed))"
                " WITH CLUSTERING ORDER BY (placed DESC) AND comment = 'orders'")
insert = session.prepare("INSERT INTO shop.orders (customer, placed, item) VALUES (?, ?, ?)")
for i in range(3):
    session.execute(insert, ("ada", i, "item%d" % i))
out["rows"] = [r.item for r in session.execute("SELECT item FROM shop.orders WHERE customer = 'ada'")]

session.execute("USE system")
out["use_system"] = session.execute("SELECT key FROM local").one().key
out["system_columns"] = sorted(r.column_name for r in session.execute(
    "SELECT column_name FROM system_schema.columns WHERE keyspace_name = 'system' AND table_name = 'local'"))[:3]

out["describe_keyspaces"] = [r.name for r in session.execute("DESCRIBE KEYSPACES")]
create = session.execute("DESCRIBE TABLE shop.orders").one().create_statement
out["describe_table_head"] = create.split("\n")[0]
session.execute("CREATE KEYSPACE copy WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
session.execute(create.replace("CREATE TABLE shop.orders", "CREATE TABLE copy.orders"))
copied = session.execute("DESCRIBE TABLE copy.orders").one().create_statement
out["describe_replays"] = copied == create.replace("shop.orders", "copy.orders")
session.execute("USE shop")
out["describe_keyspace"] = [(r.type, r.name) for r in session.execute("DESCRIBE KEYSPACE")]

cluster.refresh_schema_metadata()
table = cluster.metadata.keyspaces["shop"].tables["orders"]
out["metadata_key"] = [c.name for c in table.partition_key] + [c.name for c in table.clustering_key]
out["metadata_comment"] = table.options.get("comment")
cluster.shutdown()
print(json.dumps(out, sort_keys=True))
