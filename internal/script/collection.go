package script

// Collection is what a procedure or trigger may read and write: one logical partition of one
// container, inside one transaction. The engine implements it. Documents go in and out as
// JSON; failures are *fault.Error values, handed to the script's callback.
type Collection interface {
	// SelfLink is the container's link, as getSelfLink() returns it.
	SelfLink() string
	// AltLink is its link by name (dbs/{db}/colls/{container}), as getAltLink() returns it.
	AltLink() string
	// Quota is the container's quota and usage as the service's headers give them, as the
	// response's getMaxResourceQuota() and getResourceQuotaCurrentUsage() return them.
	Quota() (max, usage string)
	Create(doc []byte, o WriteOptions) ([]byte, error)
	Upsert(doc []byte, o WriteOptions) ([]byte, error)
	// Replace replaces the document ref names; the result is the stored document.
	Replace(ref DocRef, doc []byte, o WriteOptions) ([]byte, error)
	Read(ref DocRef, o WriteOptions) ([]byte, error)
	Delete(ref DocRef, o WriteOptions) error
	// Query runs a SQL query over the logical partition, seeing the transaction's own writes.
	Query(q Query, o FeedOptions) (Page, error)
	// ReadAll lists the logical partition's documents, a page at a time.
	ReadAll(o FeedOptions) (Page, error)
}

// DocRef names a document by the link a script passed: by id (a name-based link such as
// dbs/d/colls/c/docs/id, or a bare id) or by resource id (a _self link).
type DocRef struct {
	ID  string
	RID string
}

// WriteOptions are the options of a document operation.
type WriteOptions struct {
	// IfMatch is the etag (unquoted) the current version must have; "" for none.
	IfMatch string
}

// Query is a query as a script gives it: text, and parameters as JSON ([{"name", "value"}]).
type Query struct {
	Text   string
	Params []byte
}

// FeedOptions page a query or a read feed.
type FeedOptions struct {
	PageSize     int // 0: the server's default
	Continuation string
}

// Page is one page of documents or query results, as JSON, and where the next one starts.
type Page struct {
	Docs         [][]byte
	Continuation string // "" after the last page
}
