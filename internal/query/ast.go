package query

import "github.com/partita-db/partita/internal/value"

// Query is one SELECT statement. Clauses that are absent are nil or empty.
type Query struct {
	Select  Select
	From    *From // nil for a query without FROM, e.g. SELECT 1
	Where   Expr
	GroupBy []Expr
	OrderBy []OrderItem
	Offset  Expr // OFFSET n: a number literal or a parameter
	Limit   Expr // LIMIT n
}

// Select is the projection.
type Select struct {
	Distinct bool
	Top      Expr         // TOP n: a number literal or a parameter
	Star     bool         // SELECT *
	Value    Expr         // SELECT VALUE expr
	Items    []SelectItem // SELECT a, b AS x
}

// SelectItem is one projected expression; Alias is "" when none was written.
type SelectItem struct {
	Expr  Expr
	Alias string
}

// From is the FROM clause: a first source and its JOINs, each joined as a cross product
// within the same item.
type From struct {
	Source Source
	Joins  []Source
}

// Source is one collection expression:
//
//	FROM c                  Source{Alias: "c", Expr: Ident{"c"}}
//	FROM Families f         Source{Alias: "f", Expr: Ident{"Families"}}
//	FROM c.children[0] ch   Source{Alias: "ch", Expr: Index{...}}
//	FROM ch IN c.children   Source{Alias: "ch", In: true, Expr: Property{Ident{"c"}, "children"}}
//	FROM (SELECT ...) s     Source{Alias: "s", Expr: Subquery{...}}
//
// Without IN the source yields one value per input row (the expression's value, skipped when
// undefined); with IN it yields each element of the array the expression evaluates to. For the
// first source of FROM, an Ident or path that starts at the container's name is evaluated
// against each item of the container.
type Source struct {
	Alias string
	In    bool
	Expr  Expr
}

// OrderItem is one ORDER BY key.
type OrderItem struct {
	Expr Expr
	Desc bool
	// Directed is set when ASC or DESC was written. ORDER BY VectorDistance(...) without
	// either orders by similarity, most similar first (search.go).
	Directed bool
	// Rank is ORDER BY RANK: Expr is a scoring function (FullTextScore, VectorDistance or
	// RRF), ordered most relevant first.
	Rank bool
}

// Expr is an expression node.
type Expr interface{ exprNode() }

type (
	// Literal is a constant: number, string, true, false, null, or undefined.
	Literal struct{ Val value.Value }
	// Param is a query parameter such as @id; Name includes the '@'.
	Param struct{ Name string }
	// Ident is a reference to a FROM alias or to the container's root name. At is where the
	// name is written in the query text, as a byte offset plus one, so that the zero value (a
	// tree built by hand) means unknown; binding errors use it to say where.
	Ident struct {
		Name string
		At   int
	}
	// Property is Obj.Name or Obj["Name"] with a string literal.
	Property struct {
		Obj  Expr
		Name string
	}
	// Index is Obj[Index] with a computed or numeric index.
	Index struct {
		Obj   Expr
		Index Expr
	}
	// Unary is -x, +x, NOT x, ~x. Op is "-", "+", "NOT" or "~".
	Unary struct {
		Op string
		X  Expr
	}
	// Binary is a binary operator. Op is one of
	// + - * / % || = != < <= > >= AND OR & | ^ << >> >>> ??
	// (<> is parsed as !=).
	Binary struct {
		Op   string
		L, R Expr
	}
	// Between is X [NOT] BETWEEN Lo AND Hi.
	Between struct {
		X, Lo, Hi Expr
		Not       bool
	}
	// In is X [NOT] IN (List...).
	In struct {
		X    Expr
		List []Expr
		Not  bool
	}
	// Like is X [NOT] LIKE Pattern [ESCAPE Escape]; Escape is nil when absent.
	Like struct {
		X, Pattern, Escape Expr
		Not                bool
	}
	// Conditional is Cond ? Then : Else.
	Conditional struct{ Cond, Then, Else Expr }
	// Call is a function call. Built-ins have Name in upper case (e.g. "ST_DISTANCE",
	// "COUNT"); UDF calls (udf.name(...)) have UDF set and Name as written.
	Call struct {
		Name string
		UDF  bool
		Args []Expr
	}
	// ArrayLit is [a, b, ...].
	ArrayLit struct{ Elems []Expr }
	// ObjectLit is {"k": v, ...}; keys may be written as identifiers or strings.
	ObjectLit struct{ Members []ObjectMember }
	// Subquery is a scalar subquery (SELECT ...) used as an expression or a FROM source.
	Subquery struct{ Q *Query }
	// Exists is EXISTS(SELECT ...).
	Exists struct{ Q *Query }
	// ArrayQuery is ARRAY(SELECT ...).
	ArrayQuery struct{ Q *Query }
)

// ObjectMember is one member of an object literal.
type ObjectMember struct {
	Key string
	Val Expr
}

func (Literal) exprNode()     {}
func (Param) exprNode()       {}
func (Ident) exprNode()       {}
func (Property) exprNode()    {}
func (Index) exprNode()       {}
func (Unary) exprNode()       {}
func (Binary) exprNode()      {}
func (Between) exprNode()     {}
func (In) exprNode()          {}
func (Like) exprNode()        {}
func (Conditional) exprNode() {}
func (Call) exprNode()        {}
func (ArrayLit) exprNode()    {}
func (ObjectLit) exprNode()   {}
func (Subquery) exprNode()    {}
func (Exists) exprNode()      {}
func (ArrayQuery) exprNode()  {}
