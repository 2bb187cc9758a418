package document

import (
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/value"
)

// Limits of an item, as Cosmos has them.
const (
	MaxItemBytes       = 2 << 20 // a stored item, system properties included
	MaxIDLength        = 255     // characters of a database, container or script id
	MaxItemIDBytes     = 1023    // bytes of an item id (UTF-8)
	MaxPartitionKeyLen = 2048    // bytes of the partition key value
)

// systemProperties are written by the server only; copies sent back by clients are dropped.
var systemProperties = map[string]bool{
	"_rid": true, "_self": true, "_etag": true, "_attachments": true, "_ts": true, "_lsn": true,
}

// IsSystemProperty reports whether a top-level property is one the server writes.
func IsSystemProperty(name string) bool { return systemProperties[name] }

// Item is an incoming item body that has been validated, with what the write path needs.
type Item struct {
	body []byte
	// kept are the spans of the top-level members that are not system properties, in order.
	kept [][2]int
	ID   string
	// Value is the whole body, parsed: the index terms are computed from it.
	Value value.Value
}

// Parse validates body as a JSON object with a valid string id and extracts the partition key
// value at each of paths (each path given as its segments). A missing value is epk.Undefined.
func Parse(body []byte, paths [][]string) (*Item, epk.Key, error) {
	if len(body) > MaxItemBytes {
		return nil, nil, fault.New(fault.TooLarge, "Request size is too large: the item is %d bytes; the limit is %d bytes", len(body), MaxItemBytes)
	}
	// One strict parse validates the body for the scans below and gives the index its terms.
	parsed, err := value.Parse(body)
	if err != nil {
		if json.Valid(body) { // valid, but nested beyond what the index walks
			return nil, nil, fault.New(fault.BadRequest, "The item nests objects and arrays too deeply: %v", err)
		}
		// encoding/json's wording, more familiar to clients than the parser's
		return nil, nil, fault.New(fault.BadRequest, "The request body is not valid JSON: %s", syntaxError(body))
	}
	if parsed.Kind() != value.Object {
		return nil, nil, fault.New(fault.BadRequest, "The item must be a JSON object")
	}
	// The id and the partition key come from the parsed value; the bytes are only scanned
	// again, for the spans Stamp copies, when the client sent system properties to drop.
	id, key, err := identity(parsed, paths)
	if err != nil {
		return nil, nil, err
	}
	return &Item{body: body, kept: keptSpans(body, parsed), ID: id, Value: parsed}, key, nil
}

// identity checks an item's id and extracts its partition key at paths, from its value.
func identity(item value.Value, paths [][]string) (string, epk.Key, error) {
	id := item.Get("id")
	switch {
	case id.IsUndefined():
		return "", nil, fault.New(fault.BadRequest, "The item has no 'id' property; every item needs a string id")
	case id.Kind() != value.String:
		return "", nil, fault.New(fault.BadRequest, "The id of an item must be a string")
	}
	if err := ValidateItemID(id.Str()); err != nil {
		return "", nil, err
	}
	key := make(epk.Key, len(paths))
	for i, p := range paths {
		k, err := keyOf(item, p)
		if err != nil {
			return "", nil, err
		}
		key[i] = k
	}
	if err := CheckPartitionKey(key); err != nil {
		return "", nil, err
	}
	return id.Str(), key, nil
}

// ValidateID applies Cosmos's rules for the ids of databases, containers, scripts, users and
// permissions: at most 255 characters.
func ValidateID(id string) error {
	if n := utf8.RuneCountInString(id); n > MaxIDLength {
		return fault.New(fault.BadRequest, "The id is %d characters long; the limit is %d", n, MaxIDLength)
	}
	return validIDChars(id)
}

// ValidateItemID applies Cosmos's rules for item ids: at most 1,023 bytes.
func ValidateItemID(id string) error {
	if len(id) > MaxItemIDBytes {
		return fault.New(fault.BadRequest, "The id is %d bytes long; the limit for an item id is %d bytes", len(id), MaxItemIDBytes)
	}
	return validIDChars(id)
}

// validIDChars refuses an empty id and the characters no id may hold.
func validIDChars(id string) error {
	if id == "" {
		return fault.New(fault.BadRequest, "The id must not be empty")
	}
	if i := strings.IndexAny(id, `/\?#`); i >= 0 {
		return fault.New(fault.BadRequest, "The id %q contains the character %q, which is not allowed in ids ('/', '\\', '?', '#')", id, id[i])
	}
	return nil
}

// CheckPartitionKey enforces the size cap on a partition key value.
func CheckPartitionKey(k epk.Key) error {
	n := 0
	for _, v := range k {
		switch v.Kind {
		case epk.KindString:
			n += len(v.Str)
		case epk.KindNumber:
			n += 8
		default:
			n++
		}
	}
	if n > MaxPartitionKeyLen {
		return fault.New(fault.BadRequest, "The partition key value is %d bytes; the limit is %d bytes", n, MaxPartitionKeyLen)
	}
	return nil
}

// keptSpans returns the byte spans of the top-level members of the object body that Stamp
// keeps: all of them, as one span, unless some are system properties.
func keptSpans(body []byte, parsed value.Value) [][2]int {
	system := false
	for _, m := range parsed.Members() {
		system = system || systemProperties[m.Key]
	}
	start := skipSpace(body, 0)
	if !system {
		if len(parsed.Members()) == 0 {
			return nil
		}
		end := len(body) - 1
		for body[end] != '}' { // trailing white space
			end--
		}
		last := end
		for isSpace(body[last-1]) {
			last--
		}
		return [][2]int{{skipSpace(body, start+1), last}}
	}
	var kept [][2]int
	members(body, start, func(m member) bool {
		if !systemProperties[m.key] {
			kept = append(kept, [2]int{m.start, m.end})
		}
		return true
	})
	return kept
}

// decodeString decodes the string whose opening quote is b[i] and returns it with the index
// just past its closing quote. It decodes as value.Parse did when it validated the body.
func decodeString(b []byte, i int) (string, int) {
	s, n, err := value.Unquote(b[i+1:], '"', value.DialectJSON)
	if err != nil {
		return "", len(b) // cannot happen: the body is valid
	}
	return s, i + 1 + n
}

func syntaxError(body []byte) string {
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		return err.Error()
	}
	return "unknown error"
}

// System holds the system properties the server stamps on a stored item.
type System struct {
	RID  string // base64 resource id
	Self string // "dbs/<rid>/colls/<rid>/docs/<rid>/"
	ETag string // unquoted; written with quotes as Cosmos does
	TS   int64  // seconds since the Unix epoch
}

// Body is the item as the client sent it, which Parse reads back to the same item.
func (it *Item) Body() []byte { return it.body }

// Stamp appends to dst the item as it is stored: its own members followed by the system
// properties, which replace any the client sent.
func (it *Item) Stamp(dst []byte, sys System) []byte {
	dst = append(dst, '{')
	for _, span := range it.kept {
		dst = append(dst, it.body[span[0]:span[1]]...)
		dst = append(dst, ',')
	}
	dst = append(dst, `"_rid":`...)
	dst = strconv.AppendQuote(dst, sys.RID)
	dst = append(dst, `,"_self":`...)
	dst = strconv.AppendQuote(dst, sys.Self)
	dst = append(dst, `,"_etag":"\"`...)
	dst = append(dst, sys.ETag...)
	dst = append(dst, `\"","_attachments":"attachments/","_ts":`...)
	dst = strconv.AppendInt(dst, sys.TS, 10)
	return append(dst, '}')
}

// StampedSize is the length Stamp will produce, so callers can check size limits first.
func (it *Item) StampedSize(sys System) int {
	n := 2
	for _, span := range it.kept {
		n += span[1] - span[0] + 1
	}
	return n + len(`"_rid":"","_self":"","_etag":"\"\"","_attachments":"attachments/","_ts":`) +
		len(sys.RID) + len(sys.Self) + len(sys.ETag) + 20
}
