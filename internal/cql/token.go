package cql

import "strings"

// tokKind is the kind of a lexical token.
type tokKind uint8

const (
	tkEOF      tokKind = iota
	tkWord             // unquoted identifier or keyword; text lower-cased in val, kw set for keywords
	tkQuoted           // "quoted identifier"; val keeps its case, "" decoded to "
	tkString           // '...' or $$...$$; val is the decoded value
	tkInteger          // digits; val is the text
	tkFloat            // digits with a fraction or exponent, NaN or Infinity; val is the text
	tkHex              // 0x... blob; val is the text, lower-cased
	tkUUID             // 8-4-4-4-12 hexadecimal; val is the text, lower-cased
	tkDuration         // 1h30m and the like; val is the text, lower-cased
	tkBool             // true or false, any case; val is "true" or "false"
	tkQuestion         // the anonymous bind marker ?
	tkPunct            // operator or punctuation; val is the operator
	tkError            // lexical error; val is the message
)

// token is one lexical token. Its off is the byte offset of its first character.
type token struct {
	kind tokKind
	off  int
	val  string
	kw   string // for tkWord, the word in upper case when it is a keyword; "" otherwise
}

// keywords are the words of CQL, with whether Cassandra 3.x/4.x reserves them. A reserved word
// can be a name only when quoted ("from"); an unreserved one (key, type, ttl, count, writetime,
// the native type names, ...) is also a name wherever the grammar expects one, which is what lets
// `CREATE TABLE t (key text PRIMARY KEY, type int, ttl int)` work as it does in Cassandra. The
// list follows the CQL reference's appendix of keywords, plus MATERIALIZED, VIEW, IS, DEFAULT and
// UNSET, which Cassandra 4 reserves.
var keywords = map[string]bool{
	// reserved
	"ADD": true, "ALLOW": true, "ALTER": true, "AND": true, "APPLY": true, "ASC": true,
	"AUTHORIZE": true, "BATCH": true, "BEGIN": true, "BY": true, "COLUMNFAMILY": true,
	"CREATE": true, "DEFAULT": true, "DELETE": true, "DESC": true, "DESCRIBE": true, "DROP": true,
	"ENTRIES": true, "EXECUTE": true, "FROM": true, "FULL": true, "GRANT": true, "IF": true,
	"IN": true, "INDEX": true, "INFINITY": true, "INSERT": true, "INTO": true, "IS": true,
	"KEYSPACE": true, "LIMIT": true, "MATERIALIZED": true, "MODIFY": true, "NAN": true,
	"NORECURSIVE": true, "NOT": true, "NULL": true, "OF": true, "ON": true, "OR": true,
	"ORDER": true, "PRIMARY": true, "RENAME": true, "REPLACE": true, "REVOKE": true,
	"SCHEMA": true, "SELECT": true, "SET": true, "TABLE": true, "TO": true, "TOKEN": true,
	"TRUNCATE": true, "UNLOGGED": true, "UNSET": true, "UPDATE": true, "USE": true,
	"USING": true, "VIEW": true, "WHERE": true, "WITH": true,
	// unreserved
	"AGGREGATE": false, "ALL": false, "AS": false, "CAST": false, "CLUSTERING": false,
	"COMPACT": false, "CONTAINS": false, "COUNT": false, "COUNTER": false, "CUSTOM": false,
	"DISTINCT": false, "EXISTS": false, "FILTERING": false, "FROZEN": false, "FUNCTION": false,
	"GROUP": false, "JSON": false, "KEY": false, "KEYS": false, "KEYSPACES": false, "LIKE": false,
	"LIST": false, "MAP": false, "PARTITION": false, "PER": false, "SET_": false,
	"STATIC": false, "STORAGE": false, "TIMESTAMP": false, "TTL": false, "TUPLE": false,
	"TYPE": false, "USER": false, "VALUES": false, "WRITETIME": false,
	// unreserved words of DESCRIBE
	"AGGREGATES": false, "CLUSTER": false, "COLUMNFAMILIES": false, "FUNCTIONS": false,
	"INTERNALS": false, "ONLY": false, "TABLES": false, "TYPES": false,
}

// keywordOf maps a keyword in lower case to its upper-case form, so that the lexer looks words
// up without upper-casing them.
var keywordOf = func() map[string]string {
	m := make(map[string]string, len(keywords))
	for kw := range keywords {
		m[strings.ToLower(kw)] = kw
	}
	return m
}()

// reserved reports whether the unquoted word w (any case) is a reserved keyword of CQL.
func reserved(w string) bool { return keywords[strings.ToUpper(w)] }
