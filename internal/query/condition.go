package query

import (
	"maps"
	"slices"

	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/value"
)

// Condition is the precondition of a conditional patch: a filter written as the FROM and WHERE
// clauses of a query without SELECT, "FROM c WHERE c.stock > 0", that the current version of
// the item must pass for the patch to apply. It is parsed and bound once, when the request
// arrives, and evaluated on the partition's writer, where every other write of the partition
// waits for it: so its work is bounded.
type Condition struct {
	p    *Prepared
	text string
}

// Text is the condition as it was written, from which PrepareCondition makes it again (on the
// node a patch is sent to).
func (c *Condition) Text() string { return c.text }

// MaxConditionRows bounds the rows (FROM and JOIN combinations) a condition may produce over
// one item; past it the condition fails with 400 instead of holding up the writer.
const MaxConditionRows = 10000

// PrepareCondition parses a patch condition. Errors are 400s whose positions count in text
// itself. A condition takes no parameters: the patch request has no place for their values.
func PrepareCondition(text string) (*Condition, error) {
	q, err := parseWith(text, (*sqlParser).condition)
	if err != nil {
		return nil, err
	}
	p, err := prepareTree(q, text)
	if err != nil {
		return nil, err
	}
	if len(p.params) > 0 {
		names := slices.Sorted(maps.Keys(p.params))
		return nil, fault.New(fault.BadRequest, "The patch condition uses parameter %s; a condition takes no parameters, write the value into it", names[0])
	}
	return &Condition{p: p, text: text}, nil
}

// condition parses FROM ... [JOIN ...] [WHERE expr] into the query SELECT VALUE 1 FROM ...
// WHERE ..., which returns a result for each row that passes.
func (p *sqlParser) condition() *Query {
	q := &Query{Select: Select{Value: Literal{Val: value.Num(1)}}}
	p.expectKw("FROM")
	q.From = p.fromClause()
	if p.acceptKw("WHERE") {
		q.Where = p.expr()
	}
	if t := p.tok(); t.kind != tkEOF && t.kind != tkError {
		p.fail(t.off, "expected WHERE or the end of the condition, found %s: a patch condition is FROM ... WHERE ... and nothing else", describeToken(t))
	}
	return q
}

// Holds evaluates the condition against the item doc (its JSON). A WHERE that is false or
// undefined for every row does not hold.
func (c *Condition) Holds(doc []byte) (bool, error) {
	page, err := c.p.Run(Slice{doc}, Options{MaxRows: MaxConditionRows, MaxItems: 1})
	if err != nil {
		return false, err
	}
	return len(page.Results) > 0, nil
}
