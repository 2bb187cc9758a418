// Features the server does not implement yet. Turn each placeholder into real tests (in the
// file of its resource) when the server gains the feature. Gaps in features the server does
// have are marked `{ todo: "server: ..." }` on the tests themselves, in their files.

import { describe, test } from "node:test";

describe("not yet implemented server-side", () => {
  describe("change feed", () => {
    test.todo("items.getChangeFeedIterator from beginning and from now, per partition key and for the container");
    test.todo("change feed continuation resumes without repeats");
  });
});
