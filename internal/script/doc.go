// Package script runs the JavaScript of a container's stored procedures, triggers and
// user-defined functions, with github.com/dop251/goja.
//
// A Runner compiles each distinct script body once and keeps a small pool of runtimes per
// compiled script, each with the function already evaluated and the server-side API installed.
// A call borrows a runtime, runs, and gives it back; a runtime whose call was interrupted
// (time, memory) or panicked is dropped, never reused. Runtimes are never shared between
// different scripts, so what one script does to its globals cannot reach another.
//
// Procedures and triggers reach data only through a Collection, which the caller (the engine)
// implements over one logical partition and one transaction: this package knows nothing of
// partitions, storage or HTTP. The API the script sees is Cosmos DB's server-side API:
//
//	getContext().getCollection()   createDocument, upsertDocument, readDocument,
//	                               replaceDocument, deleteDocument, queryDocuments,
//	                               readDocuments, getSelfLink
//	getContext().getRequest()      getBody, setBody, getValue, setValue, getMaxItemCount,
//	                               getOperationType (in triggers)
//	getContext().getResponse()     getBody, setBody, getValue, setValue, getMaxItemCount
//	getContext().abort(err)
//	__                             the collection, with the same methods, and the query chain
//	                               (chain.go): chain, filter, map, pluck, sortBy,
//	                               sortByDescending, flatten, value
//	console.log                    collected for x-ms-documentdb-script-log-results
//
// Collection methods return whether the operation was accepted: false once the call has used
// most of its time or operations, after which the script should stop and report how far it
// got. Callbacks run after the function that asked for them returns, in order, as the
// service's asynchronous API does, so recursion through callbacks does not grow the stack.
//
// Every call is bounded (Limits): a time budget enforced by interrupting the runtime, a call
// depth, caps on argument and result sizes, size caps on the built-ins that build one large
// value in one native step (String.prototype.repeat, padStart, padEnd, concat and split,
// Array.prototype.fill, join and toLocaleString, Array.from, the array and typed-array
// constructors), a cap on the length the Array methods and String.raw walk natively (over a
// copy, for an array-like or a proxy whose length could answer the check one thing and the
// method another), a time limit on each match of a backtracking regular expression, a cap on
// how deep JSON.parse and JSON.stringify go (they recurse natively),
// and a memory watch that interrupts a call whose allocations run away. The script's text is
// evaluated (it is an expression, which may run code) within the budget of the call that
// first runs it. A failure of any kind ends that call with an error (*fault.Error) and leaves
// the process and every other call unaffected.
//
// It must never import the engine, storage or a front end.
package script
