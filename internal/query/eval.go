package query

import (
	"math"
	"regexp"
	"strings"

	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/value"
)

// binding is one FROM alias bound to a value for the row being evaluated.
type binding struct {
	name string
	val  value.Value
}

// row is the set of bindings an expression is evaluated against. Rows are small (one binding
// per FROM source), so a slice beats a map.
type row []binding

func (r row) lookup(name string) (value.Value, bool) {
	for i := len(r) - 1; i >= 0; i-- {
		if r[i].name == name {
			return r[i].val, true
		}
	}
	return value.Undef(), false
}

// evaluator evaluates expressions of one query execution.
type evaluator struct {
	params map[string]value.Value
	env    *Env
	// aggs holds the values of aggregate calls while a group's projection is evaluated.
	aggs []value.Value
	// stats counts work for charges and metrics.
	stats *Stats
	// subs are the prepared forms of the query's nested queries.
	subs map[*Query]*Prepared
	// doc is the item being read, which a nested query's FROM may start from.
	doc value.Value
	// rowBudget, when set, is how many more rows the execution may produce (Options.MaxRows).
	rowBudget *int
	// itemRows, when set, counts the rows the current item's FROM and JOINs produced, its
	// subqueries' included; past MaxItemRows the query fails (a cross product of a few large
	// arrays would otherwise run for hours on one item).
	itemRows *int
}

// MaxItemRows bounds the rows one item's JOINs (and its subqueries') may produce.
const MaxItemRows = 1 << 20

var errItemRows = fault.New(fault.BadRequest, "The query's JOINs produce more than %d rows for one item; join fewer or smaller arrays, or filter them in a subquery", MaxItemRows)

// aggRef stands in for an aggregate call once the query has been planned: it reads the
// aggregate's value for the current group.
type aggRef struct{ i int }

func (aggRef) exprNode() {}

func (ev *evaluator) eval(e Expr, r row) (value.Value, error) {
	switch x := e.(type) {
	case Literal:
		return x.Val, nil
	case Param:
		return ev.params[x.Name], nil
	case Ident:
		v, _ := r.lookup(x.Name)
		return v, nil
	case Property:
		o, err := ev.eval(x.Obj, r)
		if err != nil {
			return o, err
		}
		return o.Get(x.Name), nil
	case Index:
		o, err := ev.eval(x.Obj, r)
		if err != nil {
			return o, err
		}
		i, err := ev.eval(x.Index, r)
		if err != nil {
			return i, err
		}
		switch {
		case o.Kind() == value.Array && i.IsInteger():
			return o.Index(int(i.Num())), nil
		case o.Kind() == value.Object && i.Kind() == value.String:
			return o.Get(i.Str()), nil
		}
		return value.Undef(), nil
	case Unary:
		v, err := ev.eval(x.X, r)
		if err != nil {
			return v, err
		}
		return unary(x.Op, v), nil
	case Binary:
		return ev.binary(x, r)
	case Between:
		v, err := ev.eval(x.X, r)
		if err != nil {
			return v, err
		}
		lo, err := ev.eval(x.Lo, r)
		if err != nil {
			return lo, err
		}
		hi, err := ev.eval(x.Hi, r)
		if err != nil {
			return hi, err
		}
		res := and(compare(">=", v, lo), compare("<=", v, hi))
		if x.Not {
			return unary("NOT", res), nil
		}
		return res, nil
	case In:
		v, err := ev.eval(x.X, r)
		if err != nil || v.IsUndefined() {
			return value.Undef(), err
		}
		found := false
		for _, item := range x.List {
			c, err := ev.eval(item, r)
			if err != nil {
				return c, err
			}
			if c.Kind() == v.Kind() && value.Equal(c, v) {
				found = true
				break
			}
		}
		return value.Bool(found != x.Not), nil
	case Like:
		return ev.like(x, r)
	case Conditional:
		c, err := ev.eval(x.Cond, r)
		if err != nil {
			return c, err
		}
		if c.IsTrue() {
			return ev.eval(x.Then, r)
		}
		return ev.eval(x.Else, r)
	case Call:
		return ev.call(x, r)
	case aggRef:
		return ev.aggs[x.i], nil
	case ArrayLit:
		elems := make([]value.Value, 0, len(x.Elems))
		for _, el := range x.Elems {
			v, err := ev.eval(el, r)
			if err != nil {
				return v, err
			}
			if !v.IsUndefined() {
				elems = append(elems, v)
			}
		}
		return value.Arr(elems), nil
	case ObjectLit:
		ms := make([]value.Member, 0, len(x.Members))
		for _, m := range x.Members {
			v, err := ev.eval(m.Val, r)
			if err != nil {
				return v, err
			}
			if !v.IsUndefined() {
				ms = append(ms, value.Member{Key: m.Key, Val: v})
			}
		}
		return value.Obj(ms), nil
	case Subquery:
		res, err := ev.subquery(x.Q, r, 1)
		if err != nil || len(res) == 0 {
			return value.Undef(), err
		}
		return res[0], nil
	case Exists:
		res, err := ev.subquery(x.Q, r, 1)
		return value.Bool(len(res) > 0), err
	case ArrayQuery:
		res, err := ev.subquery(x.Q, r, -1)
		if res == nil {
			res = []value.Value{}
		}
		return value.Arr(res), err
	}
	return value.Undef(), fault.New(fault.Internal, "query: unknown expression %T", e)
}

func unary(op string, v value.Value) value.Value {
	switch op {
	case "-":
		if v.Kind() == value.Number {
			return value.Num(-v.Num())
		}
	case "+":
		if v.Kind() == value.Number {
			return v
		}
	case "NOT":
		if v.Kind() == value.Boolean {
			return value.Bool(!v.Bool())
		}
	case "~":
		if v.IsInteger() {
			return value.Num(float64(^int64(v.Num())))
		}
	}
	return value.Undef()
}

// and and or follow three-valued logic: undefined is neither true nor false.
func and(a, b value.Value) value.Value {
	if a.Kind() == value.Boolean && !a.Bool() || b.Kind() == value.Boolean && !b.Bool() {
		return value.Bool(false)
	}
	if a.IsTrue() && b.IsTrue() {
		return value.Bool(true)
	}
	return value.Undef()
}

func or(a, b value.Value) value.Value {
	if a.IsTrue() || b.IsTrue() {
		return value.Bool(true)
	}
	if a.Kind() == value.Boolean && b.Kind() == value.Boolean {
		return value.Bool(false)
	}
	return value.Undef()
}

// compare applies a comparison operator. Values of different types are incomparable
// (undefined); arrays and objects only compare for equality.
func compare(op string, a, b value.Value) value.Value {
	if a.IsUndefined() || b.IsUndefined() || a.Kind() != b.Kind() {
		return value.Undef()
	}
	if a.Kind() == value.Array || a.Kind() == value.Object {
		switch op {
		case "=":
			return value.Bool(value.Equal(a, b))
		case "!=":
			return value.Bool(!value.Equal(a, b))
		}
		return value.Undef()
	}
	c := value.Compare(a, b)
	switch op {
	case "=":
		return value.Bool(c == 0)
	case "!=":
		return value.Bool(c != 0)
	case "<":
		return value.Bool(c < 0)
	case "<=":
		return value.Bool(c <= 0)
	case ">":
		return value.Bool(c > 0)
	case ">=":
		return value.Bool(c >= 0)
	}
	return value.Undef()
}

func (ev *evaluator) binary(x Binary, r row) (value.Value, error) {
	l, err := ev.eval(x.L, r)
	if err != nil {
		return l, err
	}
	switch x.Op { // short-circuits
	case "AND":
		if l.Kind() == value.Boolean && !l.Bool() {
			return l, nil
		}
	case "OR":
		if l.IsTrue() {
			return l, nil
		}
	case "??":
		if !l.IsUndefined() {
			return l, nil
		}
	}
	rv, err := ev.eval(x.R, r)
	if err != nil {
		return rv, err
	}
	switch x.Op {
	case "AND":
		return and(l, rv), nil
	case "OR":
		return or(l, rv), nil
	case "??":
		return rv, nil
	case "=", "!=", "<", "<=", ">", ">=":
		return compare(x.Op, l, rv), nil
	case "||":
		if l.Kind() == value.String && rv.Kind() == value.String {
			return value.Str(l.Str() + rv.Str()), nil
		}
		return value.Undef(), nil
	}
	if l.Kind() != value.Number || rv.Kind() != value.Number {
		return value.Undef(), nil
	}
	a, b := l.Num(), rv.Num()
	switch x.Op {
	case "+":
		return value.Num(a + b), nil
	case "-":
		return value.Num(a - b), nil
	case "*":
		return value.Num(a * b), nil
	case "/":
		if b == 0 {
			return value.Undef(), nil
		}
		return value.Num(a / b), nil
	case "%":
		if b == 0 {
			return value.Undef(), nil
		}
		return value.Num(math.Mod(a, b)), nil
	}
	if !l.IsInteger() || !rv.IsInteger() {
		return value.Undef(), nil
	}
	// Bitwise operators work on 32-bit integers, as in JavaScript.
	ia, ib := int32(int64(a)), int32(int64(b))
	switch x.Op {
	case "&":
		return value.Num(float64(ia & ib)), nil
	case "|":
		return value.Num(float64(ia | ib)), nil
	case "^":
		return value.Num(float64(ia ^ ib)), nil
	case "<<":
		return value.Num(float64(ia << (uint32(ib) & 31))), nil
	case ">>":
		return value.Num(float64(ia >> (uint32(ib) & 31))), nil
	case ">>>":
		return value.Num(float64(uint32(ia) >> (uint32(ib) & 31))), nil
	}
	return value.Undef(), fault.New(fault.Internal, "query: unknown operator %s", x.Op)
}

func (ev *evaluator) like(x Like, r row) (value.Value, error) {
	v, err := ev.eval(x.X, r)
	if err != nil {
		return v, err
	}
	p, err := ev.eval(x.Pattern, r)
	if err != nil {
		return p, err
	}
	esc := ""
	if x.Escape != nil {
		e, err := ev.eval(x.Escape, r)
		if err != nil {
			return e, err
		}
		if e.Kind() != value.String || len([]rune(e.Str())) != 1 {
			return value.Undef(), fault.New(fault.BadRequest, "The ESCAPE of LIKE must be a single character")
		}
		esc = e.Str()
	}
	if v.Kind() != value.String || p.Kind() != value.String {
		return value.Undef(), nil
	}
	re, err := likePattern(p.Str(), esc)
	if err != nil {
		return value.Undef(), err
	}
	return value.Bool(re.MatchString(v.Str()) != x.Not), nil
}

// likePattern translates a LIKE pattern (% any run, _ any one character, [a-c] sets, an
// optional escape character) to an anchored regular expression.
func likePattern(p, esc string) (*regexp.Regexp, error) {
	var b strings.Builder
	b.WriteString("(?s)^")
	rs := []rune(p)
	for i := 0; i < len(rs); i++ {
		c := rs[i]
		switch {
		case esc != "" && string(c) == esc && i+1 < len(rs):
			i++
			b.WriteString(regexp.QuoteMeta(string(rs[i])))
		case c == '%':
			b.WriteString(".*")
		case c == '_':
			b.WriteString(".")
		case c == '[':
			end := -1
			for j := i + 1; j < len(rs); j++ {
				if rs[j] == ']' {
					end = j
					break
				}
			}
			if end < 0 {
				b.WriteString(`\[`)
				continue
			}
			set := string(rs[i+1 : end])
			if strings.HasPrefix(set, "^") {
				set = "^" + strings.ReplaceAll(regexp.QuoteMeta(set[1:]), `\-`, "-")
			} else {
				set = strings.ReplaceAll(regexp.QuoteMeta(set), `\-`, "-")
			}
			b.WriteString("[" + set + "]")
			i = end
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	b.WriteString("$")
	re, err := regexp.Compile(b.String())
	if err != nil {
		return nil, fault.New(fault.BadRequest, "The LIKE pattern %q is not valid", p)
	}
	return re, nil
}

func (ev *evaluator) call(x Call, r row) (value.Value, error) {
	if x.UDF && ev.env.UDF == nil {
		return value.Undef(), fault.New(fault.BadRequest, "User-defined function udf.%s does not exist in this container", x.Name)
	}
	if isAggregate(x.Name) {
		return value.Undef(), fault.New(fault.BadRequest, "Aggregate %s is not allowed here: aggregates may appear only in the SELECT list", x.Name)
	}
	var b builtin
	if !x.UDF {
		if f, ok := searchFunction(x.Name); ok {
			return f.eval(ev, x, r)
		}
		var ok bool
		if b, ok = lookupBuiltin(x.Name); !ok {
			return value.Undef(), fault.New(fault.BadRequest, "Unknown function %s", x.Name)
		}
	}
	args, err := ev.evalArgs(x.Args, r)
	if err != nil {
		return value.Undef(), err
	}
	if x.UDF {
		return ev.env.UDF(x.Name, args)
	}
	return b.fn(ev.env, args), nil
}
