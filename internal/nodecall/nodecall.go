package nodecall

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/partita-db/partita/internal/document"
	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/ru"
)

// ErrCodec is what a cluster's Call wraps when a request could not be encoded or its answer
// does not decode: a failure of this node or of the other, never of the client's request.
var ErrCodec = errors.New("nodecall: a request or an answer that does not encode or decode")

// Request is one request to another node (see the package comment for its kinds).
type Request struct {
	Container uint32 `json:"container"`
	EPK       []byte `json:"epk"`
	Ops       []Op   `json:"ops"`
	// Admit is false for a transaction's commit, which its request was admitted for before.
	Admit bool   `json:"admit"`
	Split *Split `json:"split,omitempty"`
	// Trace is the request's trace context and activity id (a tracing.Carrier), for the
	// spans and log lines of the node that serves it.
	Trace map[string]string `json:"trace,omitempty"`
	Call  *Call             `json:"call,omitempty"`
	Read  *Read             `json:"read,omitempty"`
	// Figures asks for the load figures of the node's replicas.
	Figures bool `json:"figures,omitempty"`
	// Shares is sent only once the cluster's version is clusterversion.PartitionBudgets: a
	// node of an earlier release would take it for a write.
	Shares *ShareAsk `json:"shares,omitempty"`
	// Low is a Low priority request's (ru.Low): admitted behind High ones where it is
	// admitted. A node of an earlier release ignores it and takes the request as High.
	Low bool `json:"low,omitempty"`
}

// Op is one operation of a write: the item as the client sent it, and the index and unique
// key entries computed by the asking node (nil: computed where it runs).
type Op struct {
	Kind    uint8    `json:"kind"` // a partition.OpKind
	ID      string   `json:"id"`
	Body    []byte   `json:"body,omitempty"`
	IfMatch string   `json:"ifMatch,omitempty"`
	Terms   [][]byte `json:"terms"`
	Unique  [][]byte `json:"unique"`
	LSN     uint64   `json:"lsn,omitempty"` // an Unchanged operation's: the LSN read at
}

// Split asks the node of a partition's leader to split it at At.
type Split struct {
	Parent uint32 `json:"parent"`
	At     []byte `json:"at"`
}

// Answer is what a request did: a write's results, or its error (in the operation Index of
// a batch, -1 for none), and whether it may be tried again (Retry: nothing applied); the
// other kinds' answers in their fields.
type Answer struct {
	Results []Result     `json:"results,omitempty"`
	Charges []float64    `json:"charges,omitempty"`
	Charge  float64      `json:"charge"`
	Err     *fault.Error `json:"err,omitempty"`
	Index   int          `json:"index"`
	Retry   bool         `json:"retry,omitempty"`
	// Moved says that the node holds no replica of the partition asked about.
	Moved   bool            `json:"moved,omitempty"`
	Call    *CallAnswer     `json:"call,omitempty"`
	Read    *ReadAnswer     `json:"read,omitempty"`
	Figures []ReplicaFigure `json:"figures,omitempty"`
	Shares  *ShareAnswer    `json:"shares,omitempty"`
}

// Failed is the answer to a request that failed with f before anything was applied.
func Failed(f *fault.Error, retry bool) Answer { return Answer{Index: -1, Err: f, Retry: retry} }

// Result is one write operation's result.
type Result struct {
	JSON       []byte `json:"json,omitempty"`
	LSN        uint64 `json:"lsn"`
	Created    bool   `json:"created,omitempty"`
	PrevBytes  int    `json:"prevBytes,omitempty"`
	IndexTerms int    `json:"indexTerms,omitempty"`
}

// Call is a call on one logical partition, for a node that holds its partition: the
// method's arguments as the asking node's front end gave them.
type Call struct {
	Method CallKind `json:"method"`
	Key    epk.Key  `json:"key,omitempty"`
	ID     string   `json:"id,omitempty"`
	Kind   string   `json:"kind,omitempty"` // a write's: Create, Upsert or Replace
	Body   []byte   `json:"body,omitempty"`

	IfMatch                   string   `json:"ifMatch,omitempty"`
	IndexingDirective         string   `json:"indexing,omitempty"`
	PreTriggers, PostTriggers []string `json:",omitempty"`
	// Headers are the client's request headers, for triggers and procedures.
	Headers map[string]string `json:"headers,omitempty"`

	Feed  *FeedQuery `json:"feed,omitempty"`
	Patch *Patch     `json:"patch,omitempty"`
	Batch []BatchOp  `json:"batch,omitempty"`
	Log   bool       `json:"log,omitempty"` // a procedure's: answer what the script logged
	Args  []byte     `json:"args,omitempty"`
	// Consistency is a read's or a change feed page's.
	Consistency Consistency `json:"consistency,omitzero"`
}

// CallKind is a call's kind. Before the typed messages (clusterversion.NodeMessages) calls
// travelled as JSON with their kind named by a method string, which a node of that release
// still sends and reads: CallKind marshals to and from those names.
type CallKind uint8

const (
	CallUnknown CallKind = iota // a method of no kind this release knows
	CallRead
	CallWrite
	CallDelete
	CallPatch
	CallBatch
	CallProcedure
	CallFeed
)

var callMethods = [...]string{CallRead: "read", CallWrite: "write", CallDelete: "delete", CallPatch: "patch",
	CallBatch: "batch", CallProcedure: "procedure", CallFeed: "changefeed"}

func (k CallKind) String() string {
	if int(k) < len(callMethods) && k != CallUnknown {
		return callMethods[k]
	}
	return fmt.Sprintf("call(%d)", uint8(k))
}

func (k CallKind) MarshalJSON() ([]byte, error) { return json.Marshal(k.String()) }

func (k *CallKind) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	*k = CallKind(max(0, slices.Index(callMethods[:], s))) // "" is index 0: unknown too
	return nil
}

// Patch is a patch as it travels: its condition as text.
type Patch struct {
	Ops       []document.PatchOp `json:"ops"`
	Condition string             `json:"condition,omitempty"`
}

// BatchOp is one operation of a transactional batch.
type BatchOp struct {
	Kind    string `json:"kind"` // Create, Upsert, Replace, Delete, Read or Patch
	ID      string `json:"id,omitempty"`
	Body    []byte `json:"body,omitempty"`
	IfMatch string `json:"ifMatch,omitempty"`
	Patch   *Patch `json:"patch,omitempty"`
}

// FeedQuery is a change feed page's query: its range in hex.
type FeedQuery struct {
	From, To    string
	Start       FeedStart
	AllVersions bool
	Max         int
}

// FeedStart is where a change feed page starts: after an LSN (HasAfter), at the end of what
// was committed (Now), or at a point in time (Since).
type FeedStart struct {
	After    uint64
	HasAfter bool
	Now      bool
	Since    time.Time
}

// Consistency is a read's consistency level (1 Strong to 5 Eventual; 0 the node's default)
// and its session tokens: the LSN of each partition key range the client has seen, by range.
type Consistency struct {
	Level   uint8             `json:"level,omitempty"`
	Session map[uint32]uint64 `json:"session,omitempty"`
}

// CallAnswer is what a call returned, its error aside (Answer.Err).
type CallAnswer struct {
	Item      ItemResult       `json:"item"`
	Batch     []OpResult       `json:"batch,omitempty"`
	Failed    int              `json:"failed"`
	Procedure *ProcedureResult `json:"procedure,omitempty"`
	Feed      *FeedPage        `json:"feed,omitempty"`
}

// ItemResult is an item call's result (the engine's ItemResult, field for field).
type ItemResult struct {
	Doc          []byte
	ETag         string
	LSN, ItemLSN uint64
	PartitionID  uint32
	Created      bool
	Charge       float64
}

// OpResult is one batch operation's result.
type OpResult struct {
	Err     *fault.Error `json:"err,omitempty"`
	Created bool         `json:"created,omitempty"`
	Charge  float64      `json:"charge"`
	ETag    string       `json:"etag,omitempty"`
	Doc     []byte       `json:"doc,omitempty"`
}

// ProcedureResult is a stored procedure's result (the engine's, field for field).
type ProcedureResult struct {
	Body        []byte
	Log         string
	Charge      float64
	LSN         uint64
	PartitionID uint32
}

// FeedPage is a change feed page.
type FeedPage struct {
	Changes   []FeedChange
	Through   uint64
	Partition uint32
	LSN       uint64
	Charge    float64
}

// FeedChange is one change of a page; Op is 1 create, 2 replace, 3 delete.
type FeedChange struct {
	LSN     uint64
	Op      uint8
	TS      int64
	ID      string
	JSON    []byte
	PrevLSN uint64
	Prev    []byte
	Key     epk.Key
	Expired bool
}

// Read asks a node that holds a partition for a batch of its items.
type Read struct {
	Partition uint32 `json:"partition"`
	// Index, when set, reads the items an index range holds; otherwise All reads every item
	// of the ranges (a read feed), and neither every indexed one.
	Index *IndexRange `json:"index,omitempty"`
	All   bool        `json:"all,omitempty"`
	// Ranges are the EPK ranges read, in hex.
	Ranges [][2]string `json:"ranges"`
	// Rows, when set, reads a table's rows between two positions instead, and Get one item
	// of a logical partition; with neither and no ranges, the answer is only the partition's
	// LSN.
	Rows *Rows `json:"rows,omitempty"`
	Get  *Get  `json:"get,omitempty"`
	// Count asks for the partition's item count instead, when it is exact for Ranges.
	Count bool `json:"count,omitempty"`
	// Start is the creation sequence to read from.
	Start uint64 `json:"start"`
	// Consistency is the client's read's.
	Consistency Consistency `json:"consistency,omitzero"`
}

// IndexRange is a range of an index (query.IndexRange, field for field).
type IndexRange struct {
	Path   string
	Lo, Hi []byte
	Values [][]byte `json:",omitempty"`
}

// Rows is a read of rows from Lo (inclusive) to Hi (exclusive), EPKs in hex.
type Rows struct {
	LoEPK, LoID, HiEPK, HiID string
	Reverse                  bool
}

// Get is a point read of one item.
type Get struct {
	EPK string `json:"epk"` // hex
	ID  string `json:"id"`
}

// ReadAnswer is a batch of a partition's items, in creation order; More says whether the
// partition has more after them.
type ReadAnswer struct {
	Docs []Doc  `json:"docs"`
	More bool   `json:"more"`
	LSN  uint64 `json:"lsn"`
	// Count and Counted answer a Count: Counted is false when the count would not be exact.
	Count   int64 `json:"count,omitempty"`
	Counted bool  `json:"counted,omitempty"`
}

// Doc is one item of a ReadAnswer.
type Doc struct {
	Seq  uint64          `json:"seq"`
	JSON json.RawMessage `json:"json"` // as stored, not base64: items are JSON
	// EPK (in hex) and ID say which item it is, for Rows.
	EPK string `json:"epk,omitempty"`
	ID  string `json:"id,omitempty"`
}

// ShareAsk is what a follower node asks of the node that leads some of its partitions.
type ShareAsk struct {
	From   uint64     `json:"from"` // the asking node
	Groups []GroupAsk `json:"groups"`
}

// GroupAsk is one partition's ask (ru.Ask): what its follower promised for the seconds From
// to To, and what it wants.
type GroupAsk struct {
	Group   uint64  `json:"g"`
	From    int64   `json:"from"`
	To      int64   `json:"to"`
	Promise float64 `json:"p"`
	Want    float64 `json:"w"`
	Hungry  bool    `json:"h,omitempty"`
}

// ShareAnswer holds the grants of the partitions the node leads; those it does not lead are
// left out, and their followers keep their promises.
type ShareAnswer struct {
	Grants []Grant `json:"grants,omitempty"`
}

// Grant is what the follower may spend in Second (Unix time, the leader's clock).
type Grant struct {
	Group     uint64  `json:"g"`
	Second    int64   `json:"s"`
	PerSecond float64 `json:"ru"`
}

// ReplicaFigure is one replica's size and the request units charged to it in the last
// minute, and, from a node of clusterversion.PartitionBudgets or later, what the node's
// metrics show of its partition. A node of an older release sends the first three only, and
// ignores the others; Full says they are there.
type ReplicaFigure struct {
	Group uint64  `json:"g"`
	Bytes int64   `json:"b"`
	RU    float64 `json:"ru"`

	Full      bool    `json:"full,omitempty"`
	Leading   bool    `json:"lead,omitempty"`
	Items     int64   `json:"i,omitempty"`
	LSN       uint64  `json:"lsn,omitempty"`
	Total     float64 `json:"t,omitempty"`  // RUs charged since the replica opened
	Throttled uint64  `json:"th,omitempty"` // requests it refused
	// Seconds are what it spent in each second of the last minute, by its node's clock.
	Seconds []ru.SecondSpent `json:"s,omitempty"`
	Trend   []TrendFigure    `json:"tr,omitempty"`
	// Hottest are its hottest logical partitions.
	Hottest []LogicalFigure `json:"h,omitempty"`
}

// TrendFigure is a ru.TrendPoint as it travels.
type TrendFigure struct {
	Start      int64   `json:"w"` // Unix time
	PeakRU     float64 `json:"p"`
	Normalized float64 `json:"n"`
}

// LogicalFigure is a logical partition's request units: its EPK in hex, and its key value as
// JSON (none from a node of an earlier release).
type LogicalFigure struct {
	EPK string          `json:"e"`
	RU  float64         `json:"ru"`
	Key json.RawMessage `json:"k,omitempty"`
}
