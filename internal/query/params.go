package query

import (
	"encoding/json"
	"strings"

	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/value"
)

// Parameter is a query parameter as clients send it: {"name": "@x", "value": ...}.
type Parameter struct {
	Name  string          `json:"name"`
	Value json.RawMessage `json:"value"`
}

// Params turns parameters into values by name. A parameter without a value is undefined.
func Params(ps []Parameter) (map[string]value.Value, error) {
	params := make(map[string]value.Value, len(ps))
	for _, p := range ps {
		if !strings.HasPrefix(p.Name, "@") {
			return nil, fault.New(fault.BadRequest, "Query parameter names start with '@'; got %q", p.Name)
		}
		v := value.Undef()
		if len(p.Value) > 0 {
			var err error
			if v, err = value.Parse(p.Value); err != nil {
				return nil, fault.New(fault.BadRequest, "The value of query parameter %s is not valid JSON", p.Name)
			}
		}
		params[p.Name] = v
	}
	return params, nil
}

// ParseParameters reads parameters given as a JSON array of Parameter; empty input is none.
func ParseParameters(b []byte) (map[string]value.Value, error) {
	var ps []Parameter
	if len(b) > 0 {
		if err := json.Unmarshal(b, &ps); err != nil {
			return nil, fault.New(fault.BadRequest, "Query parameters must be an array of {\"name\": \"@...\", \"value\": ...}: %v", err)
		}
	}
	return Params(ps)
}

// constantOf is the value of a literal or a bound parameter (undefined when unbound); ok is
// false for any other expression.
func constantOf(e Expr, params map[string]value.Value) (v value.Value, ok bool) {
	switch x := e.(type) {
	case Literal:
		return x.Val, true
	case Param:
		return params[x.Name], true
	}
	return v, false
}
