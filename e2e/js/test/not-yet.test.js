// Features the server does not implement yet. Turn each placeholder into real tests (in the
// file of its resource) when the server gains the feature.

import { describe, test } from "node:test";

describe("not yet implemented server-side", () => {
  describe("queries", () => {
    test.todo("items.query with SELECT, WHERE, parameters, ORDER BY, aggregates, DISTINCT, OFFSET/LIMIT");
    test.todo("cross-partition queries page with continuation tokens, every item once");
    test.todo("single-partition queries (partitionKey option)");
    test.todo("items.readAll() (SELECT * from c) with maxItemCount paging");
    test.todo("databases.query and containers.query");
  });
  describe("patch", () => {
    test.todo("item.patch with add, set, replace, remove, incr, move");
    test.todo("conditional patch (filterPredicate) and the 10-operation limit");
  });
  describe("transactional batch", () => {
    test.todo("items.batch: all operations commit together in one logical partition");
    test.todo("items.batch: one failing operation rolls the batch back");
  });
  describe("bulk", () => {
    test.todo("items.executeBulkOperations / items.bulk across partitions");
  });
  describe("offers", () => {
    test.todo("database and container readOffer (throughput 400, autoscale maxThroughput)");
    test.todo("offer replace: change throughput");
  });
  describe("change feed", () => {
    test.todo("items.getChangeFeedIterator from beginning and from now, per partition key and for the container");
    test.todo("change feed continuation resumes without repeats");
  });
});
