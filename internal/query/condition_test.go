package query

import (
	"errors"
	"strings"
	"testing"

	"github.com/partita-db/partita/internal/fault"
)

func TestConditionHolds(t *testing.T) {
	doc := []byte(`{"id":"a","stock":3,"info":{"state":"open","dims":[1,2]},"tags":["x","y"],"value":1}`)
	for _, tc := range []struct {
		cond string
		want bool
	}{
		{"FROM c WHERE c.stock > 0", true},
		{"from c where c.stock > 5", false},
		{"FROM c WHERE c.missing > 0", false}, // undefined does not hold
		{"FROM c WHERE c.missing = null", false},
		{"FROM c", true}, // no WHERE: every item passes
		{"FROM root r WHERE r.info.state = 'open' AND r.info.dims[1] = 2", true},
		{"FROM c WHERE c['value'] = 1", true},
		{"FROM c WHERE STARTSWITH(c.info.state, 'op') AND ARRAY_LENGTH(c.tags) = 2", true},
		{"FROM c WHERE IS_DEFINED(c.info.closedAt)", false},
		{"FROM c WHERE EXISTS(SELECT VALUE t FROM t IN c.tags WHERE t = 'y')", true},
		{"FROM c JOIN t IN c.tags WHERE t = 'y'", true},
		{"FROM c JOIN t IN c.tags WHERE t = 'z'", false},
		{"FROM t IN c.tags WHERE t = 'x'", true},
		{"FROM c WHERE 1 = 1", true},
	} {
		c, err := PrepareCondition(tc.cond)
		if err != nil {
			t.Errorf("%s: %v", tc.cond, err)
			continue
		}
		got, err := c.Holds(doc)
		if err != nil || got != tc.want {
			t.Errorf("%s: got %v %v, want %v", tc.cond, got, err, tc.want)
		}
	}
}

// A bad condition is a 400 whose position counts in the condition's own text.
func TestConditionErrors(t *testing.T) {
	for _, tc := range []struct{ cond, want string }{
		{"", "Syntax error at line 1, column 1: expected FROM, found end of query"},
		{"WHERE c.x = 1", "Syntax error at line 1, column 1: expected FROM, found keyword 'WHERE'"},
		{"SELECT * FROM c WHERE c.x = 1", "Syntax error at line 1, column 1: expected FROM, found keyword 'SELECT'"},
		{"FROM c WHERE c.x =", "Syntax error at line 1, column 19: expected an expression"},
		{"FROM c WHERE c.value = 1", "Syntax error at line 1, column 16: expected a property name after '.', found reserved word 'value'"},
		{"FROM c WHERE x.n = 1", "Identifier 'x' could not be resolved (line 1, column 14)."},
		{"FROM c WHERE c.n = @n", "The patch condition uses parameter @n"},
		{"FROM c WHERE NOPE(c.n)", "NOPE is not a recognized built-in function name"},
		{"FROM c WHERE COUNT(c.n) > 1", "Aggregate COUNT is only allowed in the SELECT clause"},
		{"FROM c WHERE c.n = 1 ORDER BY c.n", "Syntax error at line 1, column 22: expected WHERE or the end of the condition, found keyword 'ORDER'"},
		{"FROM c ORDER BY c.n", "Syntax error at line 1, column 8: expected WHERE or the end of the condition"},
		{"FROM c WHERE c.n = 'unclosed", "Syntax error at line 1, column 20: unclosed string literal"},
	} {
		_, err := PrepareCondition(tc.cond)
		var fe *fault.Error
		if !errors.As(err, &fe) || fe.Kind != fault.BadRequest {
			t.Errorf("%q: got %v, want a 400", tc.cond, err)
			continue
		}
		if !strings.HasPrefix(fe.Message, tc.want) {
			t.Errorf("%q:\n got %s\nwant %s...", tc.cond, fe.Message, tc.want)
		}
	}
}

// A condition runs where writes wait: one that multiplies rows fails instead of running long.
func TestConditionIsBounded(t *testing.T) {
	arr := strings.Repeat("1,", 99) + "1"
	doc := []byte(`{"id":"a","arr":[` + arr + `]}`)
	c, err := PrepareCondition("FROM c JOIN x IN c.arr JOIN y IN c.arr JOIN z IN c.arr WHERE x + y + z = 0")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Holds(doc); !errors.Is(err, fault.BadRequest) {
		t.Fatalf("got %v, want a 400", err)
	}
}
