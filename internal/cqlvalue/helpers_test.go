package cqlvalue

import (
	"errors"
	"fmt"
	"testing"

	"github.com/partita-db/partita/internal/cql"
)

// parseType parses a CQL type through the parser, as a column type of CREATE TABLE.
func parseType(t testing.TB, typ string) *cql.Type {
	t.Helper()
	st, err := cql.Parse("CREATE TABLE t (k int PRIMARY KEY, c " + typ + ")")
	if err != nil {
		t.Fatalf("parse type %s: %v", typ, err)
	}
	return st.(*cql.CreateTable).Columns[1].Type
}

// mustType resolves a CQL type.
func mustType(t testing.TB, typ string) *Type {
	t.Helper()
	r, err := FromAST(parseType(t, typ), nil)
	if err != nil {
		t.Fatalf("resolve %s: %v", typ, err)
	}
	return r
}

// parseTerm parses a term as an INSERT value.
func parseTerm(t testing.TB, lit string) (cql.Term, error) {
	t.Helper()
	st, err := cql.Parse("INSERT INTO t (c) VALUES (" + lit + ")")
	if err != nil {
		return nil, err
	}
	return st.(*cql.Insert).Values[0], nil
}

// encodeLit encodes a literal for a column c of type typ.
func encodeLit(t testing.TB, typ *Type, lit string) (Value, error) {
	t.Helper()
	term, err := parseTerm(t, lit)
	if err != nil {
		t.Fatalf("parse %s: %v", lit, err)
	}
	return Encode(typ, "c", term, nil)
}

// msg is the message of an invalid-statement error, or a description of what err is instead.
func msg(err error) string {
	var inv *cql.InvalidError
	if !errors.As(err, &inv) {
		return fmt.Sprintf("not invalid: %v", err)
	}
	return inv.Fault.Message
}
