package query

import (
	"math"

	"github.com/partita-db/partita/internal/value"
)

// Type-checking functions accept any argument, undefined included, and always return a
// boolean. IIF, the one conditional function, lives here too.
var typeFunctions = map[string]builtin{
	"IS_ARRAY":     kindTest(value.Array),
	"IS_BOOL":      kindTest(value.Boolean),
	"IS_NULL":      kindTest(value.Null),
	"IS_NUMBER":    kindTest(value.Number),
	"IS_OBJECT":    kindTest(value.Object),
	"IS_STRING":    kindTest(value.String),
	"IS_DEFINED":   typeTest(func(v value.Value) bool { return !v.IsUndefined() }),
	"IS_PRIMITIVE": typeTest(value.Value.IsPrimitive),
	"IS_FINITE_NUMBER": typeTest(func(v value.Value) bool {
		return v.Kind() == value.Number && !math.IsNaN(v.Num()) && !math.IsInf(v.Num(), 0)
	}),
	// IS_INTEGER is true for integral numbers in the 64-bit integer range: the samples have
	// it true for -9223372036854775808 and 9223372036854775807 but false for
	// 18446744073709551615.
	"IS_INTEGER": typeTest(func(v value.Value) bool {
		return v.Kind() == value.Number && isInt64(v.Num())
	}),
	"IIF": fixed(3, pure(iif)),
}

func typeTest(test func(value.Value) bool) builtin {
	return fixed(1, pure(func(args []value.Value) value.Value { return boolV(test(args[0])) }))
}

func kindTest(k value.Kind) builtin {
	return typeTest(func(v value.Value) bool { return v.Kind() == k })
}

// IIF(condition, a, b) is a when the condition is the boolean true and b otherwise: a
// number, string, array or object condition is not true (IIF(123, 123, 456) is 456).
func iif(args []value.Value) value.Value {
	if args[0].IsTrue() {
		return args[1]
	}
	return args[2]
}
