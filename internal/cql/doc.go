// Package cql is the Cassandra Query Language as Partita serves it: a hand-written lexer and
// recursive-descent parser that turn statement text into a tree (ast.go), and the canonical
// printing of that tree (format.go). The CQL front end (internal/api/cql, later) parses every
// QUERY and PREPARE with it, then checks the tree against the schema and maps it onto the
// engine.
//
// What it owns:
//
//   - the lexical rules (lexer.go, token.go): unquoted names are case-insensitive and
//     lower-cased, "quoted" names keep their case ("" is a quote inside them); keywords in any
//     case, reserved or not as Cassandra 3/4 has them, so that key, type, ttl, writetime,
//     count, json, the type names... are names wherever a name fits; ” and $$ strings,
//     integers, floats (exponents, NaN, Infinity), 0x blobs, UUIDs, durations (1h30m),
//     true/false, bind markers ? and :name, comments (--, //, /* */);
//   - the statements (parser_*.go, one file per family): USE; CREATE/ALTER/DROP KEYSPACE;
//     CREATE/ALTER/DROP TABLE, TRUNCATE; INSERT (VALUES or JSON), UPDATE, DELETE, SELECT;
//     BEGIN [UNLOGGED | COUNTER] BATCH ... APPLY BATCH. CREATE [CUSTOM] INDEX, DROP INDEX,
//     CREATE TYPE and DROP TYPE are parsed, so that the front end can refuse them by name, as it
//     will refuse user-defined types, which the type grammar (types.go) accepts;
//   - bind markers: numbered from 0 in text order per statement (across a batch's statements),
//     with their positions and, for :name, names: what a PREPARED result's metadata needs.
//
// What it must never do: import the engine, storage, net/http or anything but internal/fault;
// look at a schema (whether a column exists, whether a type fits, whether a query needs ALLOW
// FILTERING is the front end's business); panic or loop on any input (nesting is bounded at 64
// levels, and FuzzParse holds it to that).
//
// The error contract (errors.go): every error is a *fault.Error of kind BadRequest with Pos set
// to the line and column (from 1, columns in characters) where the text is wrong.
//
//   - A syntax error (CQL code 0x2000) is the bare *fault.Error; its message starts
//     "Syntax error at line L, column C: ".
//   - An invalid statement (CQL code 0x2200) comes wrapped in an *InvalidError; its message
//     starts "Invalid statement at line L, column C: ". The parser reports these only for the
//     rules Cassandra calls invalid that it must check to build a sound tree: the primary key
//     declared twice or not at all, as many INSERT values as columns, a WITH option or
//     CLUSTERING ORDER given twice. The front end's own checks against the schema are invalid
//     statements too, built with Invalid.
//
// IsSyntax and IsInvalid tell them apart; both satisfy errors.Is(err, fault.BadRequest).
//
// Canonical form: each Statement's String prints keywords in upper case, names quoted only
// when needed, strings in single quotes and the optional parts one way (PRIMARY KEY as a
// clause, c += v as c = c + v, TRUNCATE TABLE), so that parsing the printed form gives the same
// tree. Tests print trees this way (testdata/), and the fuzzer checks the round trip.
//
// Example:
//
//	st, err := cql.Parse("INSERT INTO uprofile.user (user, id) VALUES (?, ?) USING TTL 60")
//	if err != nil {
//		if cql.IsSyntax(err) { ... 0x2000 ... } else { ... 0x2200 ... }
//	}
//	ins := st.(*cql.Insert)       // ins.Table.Keyspace == "uprofile", ins.Columns[1] == "id"
//	n := len(st.Markers())        // 2, for the prepared statement's variables
package cql
