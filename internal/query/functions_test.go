package query

import (
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/partita-db/partita/internal/value"
)

func TestBuiltinRegistry(t *testing.T) {
	// Every function the query reference documents in the scalar families.
	documented := strings.Fields(`
		ABS ACOS ASIN ATAN ATN2 CEILING COS COT DEGREES EXP FLOOR LOG LOG10 NUMBERBIN PI POWER
		RADIANS RAND ROUND SIGN SIN SQRT SQUARE TAN TRUNC
		INTADD INTSUB INTMUL INTDIV INTMOD INTBITAND INTBITOR INTBITXOR INTBITNOT
		INTBITLEFTSHIFT INTBITRIGHTSHIFT
		CONCAT CONTAINS ENDSWITH STARTSWITH INDEX_OF LASTINDEXOF LEFT RIGHT LENGTH LOWER UPPER
		LTRIM RTRIM TRIM REPLACE REPLICATE REVERSE SUBSTRING STRINGEQUALS TOSTRING REGEXMATCH
		STRINGJOIN STRINGSPLIT STRINGTOARRAY STRINGTOBOOLEAN STRINGTONULL STRINGTONUMBER
		STRINGTOOBJECT SUBSTRINGAFTER SUBSTRINGBEFORE LASTSUBSTRINGAFTER LASTSUBSTRINGBEFORE
		CONTAINS_ALL_CI CONTAINS_ALL_CS CONTAINS_ANY_CI CONTAINS_ANY_CS
		ARRAY_CONCAT ARRAY_CONTAINS ARRAY_CONTAINS_ANY ARRAY_CONTAINS_ALL ARRAY_LENGTH ARRAY_SLICE
		ARRAY_MAX ARRAY_MIN ARRAY_SUM ARRAY_AVG ARRAY_MEDIAN
		SETINTERSECT SETUNION SETDIFFERENCE SETEQUAL CHOOSE OBJECTTOARRAY
		IS_ARRAY IS_BOOL IS_DEFINED IS_FINITE_NUMBER IS_INTEGER IS_NULL IS_NUMBER IS_OBJECT
		IS_PRIMITIVE IS_STRING IS_DATETIME IIF
		GETCURRENTDATETIME GETCURRENTDATETIMESTATIC GETCURRENTTICKS GETCURRENTTICKSSTATIC
		GETCURRENTTIMESTAMP GETCURRENTTIMESTAMPSTATIC NOW AGO DATETIMEADD DATETIMEBIN
		DATETIMEDIFF DATETIMEFORMAT DATETIMEFROMPARTS DATETIMEPART DATETIMETOTICKS
		DATETIMETOTIMESTAMP TICKSTODATETIME TIMESTAMPTODATETIME YEAR MONTH DAY
		ST_DISTANCE ST_WITHIN ST_INTERSECTS ST_ISVALID ST_ISVALIDDETAILED ST_AREA`)
	for _, name := range documented {
		if _, ok := lookupBuiltin(name); !ok {
			t.Errorf("%s is not registered", name)
		}
	}
	for name, b := range builtins {
		if name != strings.ToUpper(name) {
			t.Errorf("%s is not upper-case", name)
		}
		if b.fn == nil || b.minArgs < 0 || b.maxArgs >= 0 && b.maxArgs < b.minArgs {
			t.Errorf("%s has a bad arity %d..%d", name, b.minArgs, b.maxArgs)
		}
	}
	for _, name := range []string{"COUNT", "SUM", "AVG", "MIN", "MAX", "COUNTIF", "NOSUCH", "abs"} {
		if _, ok := lookupBuiltin(name); ok {
			t.Errorf("%s should not be a scalar built-in", name)
		}
	}
}

type funcCase struct {
	expr call
	want string // JSON, or "undefined"
}

func runFuncCases(t *testing.T, cases []funcCase) {
	t.Helper()
	for _, tc := range cases {
		got := evalArg(t, tc.expr)
		want := evalArg(t, tc.want)
		if !sameValue(got, want, 0) {
			t.Errorf("%s%v = %v, want %v", tc.expr.name, tc.expr.args, got, tc.want)
		}
	}
}

func TestFuncWrongTypesAreUndefined(t *testing.T) {
	runFuncCases(t, []funcCase{
		{c("ABS", s("x")), "undefined"},
		{c("LOWER", "5"), "undefined"},
		{c("LENGTH", "undefined"), "undefined"},
		{c("POWER", "2", "null"), "undefined"},
		{c("CONCAT", s("a"), "1"), "undefined"},
		{c("CONTAINS", s("abc"), s("b"), s("yes")), "undefined"},
		{c("STARTSWITH", "undefined", s("a")), "undefined"},
		{c("SUBSTRING", s("abc"), s("0"), "1"), "undefined"},
		{c("REPLACE", s("abc"), "null", s("x")), "undefined"},
		{c("ARRAY_LENGTH", s("abc")), "undefined"},
		{c("ARRAY_CONCAT", "[1]", "2"), "undefined"},
		{c("ARRAY_SLICE", `{"a":1}`, "0"), "undefined"},
		{c("OBJECTTOARRAY", "[1]"), "undefined"},
		{c("OBJECTTOARRAY", `{"a":1}`, "1"), "undefined"},
		{c("SETUNION", "[1]", "null"), "undefined"},
		{c("DATETIMEADD", s("dd"), "1", "5"), "undefined"},
		{c("DATETIMEPART", s("week"), s("2020-01-01")), "undefined"},
		{c("ST_DISTANCE", `{"type":"Point","coordinates":[0,0]}`, s("x")), "undefined"},
		{c("STRINGJOIN", `["a", 1]`, s(",")), "undefined"},
		{c("TOSTRING", "undefined"), "undefined"},
		{c("IS_STRING", "undefined"), "false"},
		{c("IS_DEFINED", "null"), "true"},
	})
}

func TestFuncMath(t *testing.T) {
	runFuncCases(t, []funcCase{
		{c("ROUND", "-6.5"), "-7"},
		{c("ROUND", "-0.5"), "-1"},
		{c("ROUND", "0.5"), "1"},
		{c("ROUND", "6.5"), "7"},
		{c("SIGN", "-0.5"), "-1"},
		{c("TRUNC", "-2.78"), "-2"},
		{c("NUMBERBIN", "7.5"), "7"},
		{c("NUMBERBIN", "-7.5", "2"), "-8"},
		{c("NUMBERBIN", "7", "0"), "undefined"},
		{c("LOG", "8", "2"), "3"},
		{c("INTADD", "9223372036854775807", "1"), "-9223372036854775808"}, // wraps
		{c("INTMUL", "4294967296", "4294967296"), "0"},
		{c("INTDIV", "-7", "2"), "-3"},
		{c("INTMOD", "-7", "2"), "-1"},
		{c("INTBITRIGHTSHIFT", "-16", "2"), "-4"},
		{c("INTBITLEFTSHIFT", "1", "65"), "2"}, // shift counts are taken modulo 64
		{c("INTBITLEFTSHIFT", "1", "-1"), "-9223372036854775808"},
		{c("INTBITNOT", "-1"), "0"},
		{c("INTADD", "18446744073709551616", "0"), "undefined"}, // 2^64 is no 64-bit integer
		{c("INTADD", "1", "null"), "undefined"},
		{c("IS_INTEGER", "1e300"), "false"},
		{c("IS_INTEGER", "-0"), "true"},
		{c("IS_FINITE_NUMBER", "-Infinity"), "false"},
	})
}

func TestFuncStrings(t *testing.T) {
	runFuncCases(t, []funcCase{
		// Positions count characters, not bytes or UTF-16 units.
		{c("LENGTH", s("héllo😀")), "6"},
		{c("SUBSTRING", s("héllo😀x"), "1", "5"), `"éllo😀"`},
		{c("LEFT", s("😀ab"), "1"), `"😀"`},
		{c("RIGHT", s("ab😀"), "2"), `"b😀"`},
		{c("REVERSE", s("a😀é")), `"é😀a"`},
		{c("INDEX_OF", s("😀😀a😀"), s("a")), "2"},
		{c("INDEX_OF", s("abcabc"), s("a"), "1"), "3"},
		{c("INDEX_OF", s("abc"), s("a"), "10"), "-1"},
		{c("INDEX_OF", s("abc"), s(""), "3"), "3"},
		{c("SUBSTRING", s("abc"), "-5", "2"), `"ab"`},
		{c("SUBSTRING", s("abc"), "5", "2"), `""`},
		{c("LEFT", s("abc"), "-1"), `""`},
		{c("RIGHT", s("abc"), "-1"), `""`},
		{c("UPPER", s("àéü")), `"ÀÉÜ"`},
		{c("LOWER", s("ÀÉ")), `"àé"`},
		{c("CONTAINS", s("ÀbC"), s("àB"), "true"), "true"},
		{c("STRINGEQUALS", s("abc"), s("ABC"), "false"), "false"},
		{c("TRIM", s("\t a \n")), `"a"`},
		{c("REPLACE", s("aaa"), s("a"), s("bb")), `"bbbbbb"`},
		{c("REPLACE", s("abc"), s(""), s("x")), `"abc"`},
		{c("REPLICATE", s("ab"), "2.9"), `"abab"`},
		{c("REPLICATE", s("ab"), "0"), `""`},
		{c("REPLICATE", s("ab"), "-1"), "undefined"},
		{c("REPLICATE", s("ab"), "Infinity"), "undefined"},
		{c("REPLICATE", s("a"), "10000"), `"` + strings.Repeat("a", 10000) + `"`},
		{c("REPLICATE", s("ab"), "5001"), "undefined"}, // over 10,000 characters
		{c("TOSTRING", "null"), `"null"`},
		{c("TOSTRING", "-Infinity"), `"-Infinity"`},
		{c("TOSTRING", "1e21"), `"1e+21"`},
		{c("TOSTRING", "0.000001"), `"0.000001"`},
		{c("TOSTRING", "1e-7"), `"1e-7"`},
		{c("TOSTRING", `{"a": [1, "x\"y"]}`), `"{\"a\":[1,\"x\\\"y\"]}"`},
		{c("REGEXMATCH", s("a.c"), s(`a\.c`)), "true"},
		{c("REGEXMATCH", s("abc"), s(`a(?=b)`)), "undefined"}, // not expressible in RE2
		{c("REGEXMATCH", s("abc"), s("[")), "undefined"},
		{c("REGEXMATCH", s("abc"), s("a"), s("q")), "undefined"},
		{c("REGEXMATCH", s("x\nabc"), s("^abc$")), "false"},
		{c("REGEXMATCH", s("x\nabc"), s("^abc$"), s("m")), "true"},
		{c("REGEXMATCH", s("a\nb"), s("a.b")), "false"},
		{c("REGEXMATCH", s("a\nb"), s("a.b"), s("s")), "true"},
		{c("REGEXMATCH", s("a b"), s(`a[ ]b # comment`), s("x")), "true"},
		{c("REGEXMATCH", s("a b"), s(`a\ b`), s("x")), "true"},
		{c("STRINGTONUMBER", s("1e400")), "Infinity"},
		{c("STRINGTONUMBER", s("+1")), "undefined"},
		{c("STRINGTONUMBER", s("0x10")), "undefined"},
		{c("STRINGTOBOOLEAN", s("True")), "undefined"},
		{c("STRINGTOOBJECT", s(`{"a":1} x`)), "undefined"},
		{c("STRINGTOARRAY", s(`{"a":1}`)), "undefined"},
	})
}

// Examples from the query reference for the functions the samples folder does not cover.
func TestFuncDocumentedExamples(t *testing.T) {
	runFuncCases(t, []funcCase{
		{c("ARRAY_CONTAINS_ALL", `[1, true, "3", [1,2,3]]`, "1", "true", s("3"), "[1,2,3]"), "true"},
		{c("ARRAY_CONTAINS_ALL", "[1, 2, 3, 4]", "2", "3", "4", "5"), "false"},
		{c("ARRAY_CONTAINS_ALL", "[1, 2, 3, 4]", "1", "undefined"), "undefined"},
		{c("ARRAY_CONTAINS_ALL", "[1, 2, 3, 4]", "5", "6", "7", "8"), "false"},
		{c("ARRAY_CONTAINS_ALL", "[]", "1", "2", "3"), "false"},
		{c("ARRAY_CONTAINS_ALL", "[1, 2, 3, 4]", "5", "undefined"), "false"},
		{c("ARRAY_CONTAINS_ANY", `[1, true, "3", [1,2,3]]`, "1", "true", s("3"), "[1,2,3]"), "true"},
		{c("ARRAY_CONTAINS_ANY", "[1, 2, 3, 4]", "2", "3", "4", "5"), "true"},
		{c("ARRAY_CONTAINS_ANY", "[1, 2, 3, 4]", "1", "undefined"), "true"},
		{c("ARRAY_CONTAINS_ANY", "[1, 2, 3, 4]", "5", "6", "7", "8"), "false"},
		{c("ARRAY_CONTAINS_ANY", "[]", "1", "2", "3"), "false"},
		{c("ARRAY_CONTAINS_ANY", "[1, 2, 3, 4]", "5", "undefined"), "undefined"},
		{c("ARRAY_MAX", "[1, 2, 3, 4]"), "4"},
		{c("ARRAY_MAX", `["abc", "ABC", "aBc", "AbC"]`), `"abc"`},
		{c("ARRAY_MAX", "[true, false]"), "true"},
		{c("ARRAY_MAX", "[null, null]"), "null"},
		{c("ARRAY_MAX", `[12, "abc", true, false, null]`), `"abc"`},
		{c("ARRAY_MIN", "[1, 2, 3, 4]"), "1"},
		{c("ARRAY_MIN", `["abc", "ABC", "aBc", "AbC"]`), `"ABC"`},
		{c("ARRAY_MIN", "[true, false]"), "false"},
		{c("ARRAY_MIN", "[null, null]"), "null"},
		{c("ARRAY_MIN", `[12, "abc", true, false, null]`), "null"},
		{c("ARRAY_MIN", "[]"), "undefined"},
		{c("ARRAY_MIN", "[1, [0]]"), "undefined"},
		{c("ARRAY_SUM", "[1, 2, 3, 4]"), "10"},
		{c("ARRAY_SUM", `["abc", "ABC", "aBc", "AbC"]`), "undefined"},
		{c("ARRAY_SUM", `[12, "abc", true, false, null]`), "undefined"},
		{c("ARRAY_AVG", "[1, 2, 3, 4]"), "2.5"},
		{c("ARRAY_AVG", "[1.0, 2.0, 3.3, 4.7]"), "2.75"},
		{c("ARRAY_AVG", "[1, -2.7, 3, -4]"), "-0.675"},
		{c("ARRAY_AVG", `["abc", "ABC", "aBc", "AbC"]`), "undefined"},
		{c("ARRAY_AVG", "[]"), "undefined"},
		{c("ARRAY_MEDIAN", "[1, 2, 3, 4]"), "2.5"},
		{c("ARRAY_MEDIAN", "[1.0, 2.0, 3.3, 4.7, 7.8]"), "3.3"},
		{c("ARRAY_MEDIAN", "[1, -2.7, 3, -4]"), "-0.8500000000000001"},
		{c("ARRAY_MEDIAN", `[12, "abc", true, false, null]`), "undefined"},
		{c("SETDIFFERENCE", "[1, 2, 3]", "[1, 2, 6, 7]"), "[3]"},
		{c("SETDIFFERENCE", "[1, 2, 6, 7]", "[1, 2, 3]"), "[6, 7]"},
		{c("SETDIFFERENCE", "[1, 2, 3, 4]", "[1, 2, 3, 4, 5, 6]"), "[]"},
		{c("SETDIFFERENCE", "[]", "[1, 2, 3]"), "[]"},
		{c("SETDIFFERENCE", "[1, 2, 3]", "[]"), "[1, 2, 3]"},
		{c("SETDIFFERENCE", "[1, 1, 1, 1]", "[2, 3, 4]"), "[1]"},
		{c("SETEQUAL", "[1, 2, 3]", "[1, 2, 3]"), "true"},
		{c("SETEQUAL", "[1, 2, 3]", "[3, 2, 1]"), "true"},
		{c("SETEQUAL", "[1, 2, 3, 3]", "[1, 2, 2, 3, 1, 2]"), "true"},
		{c("SETEQUAL", "[]", "[1, 2, 3]"), "false"},
		{c("SETEQUAL", `[1, true, "abc"]`, `[true, 1, "abc"]`), "true"},
		{c("SETEQUAL", "[1, 1, 1, 1]", "[2, 3, 4]"), "false"},
		{c("LASTINDEXOF", s("abcdeabc"), s("abc")), "5"},
		{c("LASTINDEXOF", s("abcdeabc"), s("abc"), "6"), "0"},
		{c("LASTINDEXOF", s("abcdeabc"), s("abc"), "7"), "5"},
		{c("LASTINDEXOF", s("abcdeabc"), s("fg")), "-1"},
		{c("STRINGJOIN", `["Iropa", "Mountain", "Bike"]`, s(" ")), `"Iropa Mountain Bike"`},
		{c("STRINGJOIN", `["Iropa", "Mountain", "Bike"]`, s("")), `"IropaMountainBike"`},
		{c("STRINGJOIN", `["Iropa", "Mountain", "Bike"]`, "undefined"), "undefined"},
		{c("STRINGJOIN", `["6", "7", "4", "3"]`, s("A")), `"6A7A4A3"`},
		{c("STRINGJOIN", `["Adventure", "LT"]`, s("Works")), `"AdventureWorksLT"`},
		{c("STRINGSPLIT", s("Handlebar"), s("e")), `["Handl", "bar"]`},
		{c("STRINGSPLIT", s("CARBON_STEEL_BIKE_WHEEL"), s("_")), `["CARBON", "STEEL", "BIKE", "WHEEL"]`},
		{c("STRINGSPLIT", s("Road Bike"), s(" ")), `["Road", "Bike"]`},
		{c("STRINGSPLIT", s("xenmoun mountain bike"), s("moun")), `["xen", " ", "tain bike"]`},
		{c("STRINGSPLIT", s("AluminumBikeFrame"), "undefined"), "undefined"},
		{c("STRINGSPLIT", s("Helmet"), s("")), `["Helmet"]`},
		{c("STRINGSPLIT", s(""), s("")), `[""]`},
		{c("CONTAINS_ALL_CI", s("Have a nice day!"), s("have"), s("nice"), s("day!")), "true"},
		{c("CONTAINS_ALL_CI", s("Have a nice day!"), s("HAVE"), s("NICE"), s("DAY!")), "true"},
		{c("CONTAINS_ALL_CI", s("Have a nice day!"), s("had"), s("nice"), s("day!")), "false"},
		{c("CONTAINS_ALL_CI", s("Have a nice day!"), "undefined", s("nice"), s("day!")), "undefined"},
		{c("CONTAINS_ALL_CI", s("Have a nice day!"), "undefined", s("had")), "false"},
		{c("CONTAINS_ALL_CS", s("Have a nice day!"), s("have")), "false"},
		{c("CONTAINS_ANY_CI", s("Have a nice day!"), s("HAD"), s("NICE")), "true"},
		{c("CONTAINS_ANY_CS", s("Have a nice day!"), s("NICE"), s("had")), "false"},
		{c("CONTAINS_ANY_CS", s("Have a nice day!"), s("NICE"), "undefined"), "undefined"},
		{c("SUBSTRINGAFTER", s("contoso|north|2026"), s("|")), `"north|2026"`},
		{c("SUBSTRINGAFTER", s("bike::touring::frame"), s("::")), `"touring::frame"`},
		{c("SUBSTRINGBEFORE", s("contoso|north|2026"), s("|")), `"contoso"`},
		{c("SUBSTRINGBEFORE", s("a/b/c"), s("/")), `"a"`},
		{c("LASTSUBSTRINGAFTER", s("/products/shoes/boots"), s("/")), `"boots"`},
		{c("LASTSUBSTRINGAFTER", s("bike::touring::frame"), s("::")), `"frame"`},
		{c("LASTSUBSTRINGBEFORE", s("/products/shoes/boots"), s("/")), `"/products/shoes"`},
		{c("LASTSUBSTRINGBEFORE", s("A-B-C"), s("-")), `"A-B"`},
		{c("DATETIMEFORMAT", s("2024-10-10 14:40:20"), s("yyyyMMdd")), `"20241010"`},
		{c("DATETIMEFORMAT", s("2024-10-10 14:40:20"), s("yyyy-MM-dd [HH:mm:ss]")), `"2024-10-10 [14:40:20]"`},
		{c("DATETIMEFORMAT", s("2024-10-10 14:40:20"), s(`To\da\y i\s: yyyy-MM-ddTHH:mm:ss.fff`)), `"Today is: 2024-10-10T14:40:20.000"`},
		{c("DATETIMEFORMAT", s("2024-10-10 14:40:20"), s(`To\da\y i\s: yyyy-MM-ddTHH:mm:ss.FFF`)), `"Today is: 2024-10-10T14:40:20."`},
		{c("DATETIMEFORMAT", s("2024-03-05T04:05:06.1234567Z"), s("ddd dd MMM yy h:m:s tt 'at' fffffff F")), `"Tue 05 Mar 24 4:5:6 AM at 1234567 1"`},
		{c("DATETIMEFORMAT", s("2024-03-05T14:05:06Z"), s("dddd, MMMM d, yyyy hh tt K zzz")), `"Tuesday, March 5, 2024 02 PM Z +00:00"`},
		{c("YEAR", s("2023-03-06T15:29:59Z")), "2023"},
		{c("MONTH", s("2023-03-06T15:29:59Z")), "3"},
		{c("DAY", s("2023-03-06")), "6"},
		{c("DAY", s("not a date")), "undefined"},
	})
}

func TestFuncDateParsing(t *testing.T) {
	valid := []string{"2023-03-06", "2023-03-06Z", "2023-03-06 15:29:00Z", "2023-03-06T15:29:00Z",
		"2023-03-06T15:29:59", "2023-03-06T15:29:59.9", "2023-03-06T15:29:59.9Z",
		"2023-03-06T15:29:59.1234567", "2023-03-06T15:29:59.1234567Z", "2024-02-29", "0001-01-01",
		"9999-12-31T23:59:59.9999999Z"}
	invalid := []string{"2023-3-06", "2023/03/06", "2023-03-06X15:29:00", "2023-03-06T15:29",
		"2023-03-06T15:29:59.", "2023-03-06T15:29:59.12345678", "2023-03-06T15:29:59+01:00",
		"2023-02-29", "2023-13-01", "2023-00-10", "2023-03-06T24:00:00", "2023-03-06T15:60:00",
		"2023-03-06T15:29:60", "0000-01-01", "2023-03-06Z ", " 2023-03-06", "20230306", ""}
	for _, d := range valid {
		if got := callWith(t, "IS_DATETIME", value.Str(d)); !got.IsTrue() {
			t.Errorf("IS_DATETIME(%q) = %v, want true", d, got)
		}
	}
	for _, d := range invalid {
		if got := callWith(t, "IS_DATETIME", value.Str(d)); got.IsTrue() {
			t.Errorf("IS_DATETIME(%q) = %v, want false", d, got)
		}
	}
	if got := callWith(t, "IS_DATETIME", value.Num(1)); got.IsTrue() {
		t.Errorf("IS_DATETIME(1) = %v", got)
	}
}

func TestFuncDates(t *testing.T) {
	runFuncCases(t, []funcCase{
		{c("DATETIMEADD", s("mm"), "1", s("2021-01-31T10:00:00Z")), `"2021-02-28T10:00:00.0000000Z"`},
		{c("DATETIMEADD", s("month"), "1", s("2024-01-31")), `"2024-02-29T00:00:00.0000000Z"`},
		{c("DATETIMEADD", s("yy"), "1", s("2024-02-29")), `"2025-02-28T00:00:00.0000000Z"`},
		{c("DATETIMEADD", s("m"), "-14", s("2024-03-31")), `"2023-01-31T00:00:00.0000000Z"`},
		{c("DATETIMEADD", s("YEAR"), "1", s("2024-01-01")), `"2025-01-01T00:00:00.0000000Z"`},
		{c("DATETIMEADD", s("n"), "90", s("2024-01-01")), `"2024-01-01T01:30:00.0000000Z"`},
		{c("DATETIMEADD", s("ms"), "1", s("2024-01-01")), `"2024-01-01T00:00:00.0010000Z"`},
		{c("DATETIMEADD", s("mcs"), "-1", s("2024-01-01")), `"2023-12-31T23:59:59.9999990Z"`},
		{c("DATETIMEADD", s("ns"), "300", s("2024-01-01")), `"2024-01-01T00:00:00.0000003Z"`},
		{c("DATETIMEADD", s("dd"), "1.5", s("2024-01-01")), "undefined"},
		{c("DATETIMEADD", s("yyyy"), "1", s("9999-01-01")), "undefined"},
		{c("DATETIMEADD", s("dd"), "-1", s("0001-01-01")), "undefined"},
		{c("DATETIMEADD", s("week"), "1", s("2024-01-01")), "undefined"},
		{c("DATETIMEBIN", s("2021-01-08T18:35:00.1234567Z"), s("ms"), "250"), `"2021-01-08T18:35:00.0000000Z"`},
		{c("DATETIMEBIN", s("2021-01-08T18:35:00.1234567Z"), s("mcs")), `"2021-01-08T18:35:00.1234560Z"`},
		{c("DATETIMEBIN", s("2021-01-08T18:35:00.1234567Z"), s("ns"), "200"), `"2021-01-08T18:35:00.1234566Z"`},
		{c("DATETIMEBIN", s("2021-01-08T18:35:00.1234567Z"), s("ns"), "150"), `"2021-01-08T18:35:00.1234566Z"`},
		{c("DATETIMEBIN", s("1969-12-31T23:59:59.5Z"), s("ss")), `"1969-12-31T23:59:59.0000000Z"`},
		{c("DATETIMEBIN", s("2021-01-08"), s("mm")), "undefined"},
		{c("DATETIMEBIN", s("2021-01-08"), s("dd"), "0"), "undefined"},
		{c("DATETIMEBIN", s("2021-01-08"), s("dd"), "-1"), "undefined"},
		{c("DATETIMEBIN", s("2021-01-08"), s("dd"), "1", s("1600-12-31")), "undefined"},
		{c("DATETIMEDIFF", s("ms"), s("2024-01-01T00:00:00.9999999"), s("2024-01-01T00:00:01")), "1"},
		{c("DATETIMEDIFF", s("ns"), s("2024-01-01"), s("2024-01-01T00:00:00.0000001")), "100"},
		{c("DATETIMEDIFF", s("yyyy"), s("2024-12-31T23:59:59"), s("2025-01-01")), "1"},
		{c("DATETIMEDIFF", s("dd"), s("2024-01-01T23:00:00"), s("2024-01-02T01:00:00")), "1"},
		{c("DATETIMEFROMPARTS", "2024", "2", "30"), "undefined"},
		{c("DATETIMEFROMPARTS", "2024", "2", "29", "23", "59", "59", "9999999"), `"2024-02-29T23:59:59.9999999Z"`},
		{c("DATETIMEFROMPARTS", "2024", "2", "29", "24"), "undefined"},
		{c("DATETIMEFROMPARTS", "2024", "2", "29", "1", "1", "1", "10000000"), "undefined"},
		{c("DATETIMEFROMPARTS", "2024.5", "2", "29"), "undefined"},
		{c("DATETIMEPART", s("Second"), s("2024-02-29T23:59:58.5")), "58"},
		{c("DATETIMETOTICKS", s("1969-12-31T23:59:59.9999999Z")), "-1"},
		{c("DATETIMETOTIMESTAMP", s("1969-12-31T23:59:59.9999999Z")), "-1"},
		{c("DATETIMETOTIMESTAMP", s("bad")), "undefined"},
		{c("TICKSTODATETIME", "-621355968000000000"), `"0001-01-01T00:00:00.0000000Z"`},
		{c("TICKSTODATETIME", "-621355968000010000"), "undefined"},
		{c("TICKSTODATETIME", "1e30"), "undefined"},
		{c("TIMESTAMPTODATETIME", "1.5"), `"1970-01-01T00:00:00.0015000Z"`},
		{c("TIMESTAMPTODATETIME", "253402300800000"), "undefined"},
		{c("NOW"), `"2024-05-06T07:08:09.1234567Z"`},
		{c("NOW", s("dd"), "1"), `"2024-05-07T07:08:09.1234567Z"`},
		{c("NOW", s("dd")), "undefined"},
		{c("AGO", s("hh"), "8"), `"2024-05-05T23:08:09.1234567Z"`},
		{c("AGO", s("hh"), "0.5"), "undefined"},
		{c("GETCURRENTTIMESTAMP"), "1714979289123"},
		{c("GETCURRENTTICKS"), "17149792891234567"},
	})
	// With no clock in the Env the functions fall back to the real time.
	before := time.Now()
	got := nowTicks(&Env{})
	if d := got - (before.UnixNano()/100 + unixTicks); d < 0 || d > 60*ticksPerSecond {
		t.Errorf("nowTicks without Env.Now is %v ticks off", d)
	}
}

func TestFuncArrays(t *testing.T) {
	runFuncCases(t, []funcCase{
		{c("ARRAY_CONCAT", "[1]", "[2]", "[3, [4]]"), "[1, 2, 3, [4]]"},
		{c("ARRAY_CONTAINS", "[1, [2]]", "[2]"), "true"},
		{c("ARRAY_CONTAINS", `[{"a": 1, "b": {"c": 2}}]`, `{"b": {"c": 2}}`, "true"), "true"},
		{c("ARRAY_CONTAINS", `[{"a": 1, "b": {"c": 2, "d": 3}}]`, `{"b": {"c": 2}}`, "true"), "false"},
		{c("ARRAY_CONTAINS", "[1, 2]", "undefined"), "undefined"},
		{c("ARRAY_CONTAINS", "[1, 2]", "1", s("yes")), "undefined"},
		{c("ARRAY_SLICE", `["apples", "strawberries", "bananas"]`, "1", "0"), "[]"},
		{c("ARRAY_SLICE", `["apples", "strawberries", "bananas"]`, "1", "-100"), "[]"},
		{c("ARRAY_SLICE", `["apples", "strawberries", "bananas"]`, "-100", "1"), `["apples"]`},
		{c("ARRAY_SLICE", `["apples", "strawberries", "bananas"]`, "5"), "[]"},
		{c("CHOOSE", "2.5", "1", "2", "3"), "undefined"},
		{c("CHOOSE", s("1"), "1"), "undefined"},
		{c("OBJECTTOARRAY", "{}"), "[]"},
		{c("SETINTERSECT", `[{"a": 1}, [1]]`, `[[1], {"a": 1}, {"a": 1}]`), `[[1], {"a": 1}]`},
		{c("SETUNION", "[1, 1, 2]", "[2, 3, 3]"), "[1, 2, 3]"},
		{c("IIF", "null", "1", "2"), "2"},
		{c("IIF", "true", "undefined", "2"), "undefined"},
	})
}

func TestFuncSpatial(t *testing.T) {
	square := `{"type": "Polygon", "coordinates": [[[0, 0], [10, 0], [10, 10], [0, 10], [0, 0]]]}`
	clockwise := `{"type": "Polygon", "coordinates": [[[0, 0], [0, 10], [10, 10], [10, 0], [0, 0]]]}`
	holed := `{"type": "Polygon", "coordinates": [[[0, 0], [10, 0], [10, 10], [0, 10], [0, 0]], [[4, 4], [4, 6], [6, 6], [6, 4], [4, 4]]]}`
	multi := `{"type": "MultiPolygon", "coordinates": [[[[0, 0], [1, 0], [1, 1], [0, 1], [0, 0]]], [[[20, 20], [21, 20], [21, 21], [20, 21], [20, 20]]]]}`
	pt := func(lon, lat string) string { return `{"type": "Point", "coordinates": [` + lon + `, ` + lat + `]}` }
	line := `{"type": "LineString", "coordinates": [[-5, 5], [15, 5]]}`
	runFuncCases(t, []funcCase{
		{c("ST_WITHIN", pt("5", "5"), square), "true"},
		{c("ST_WITHIN", pt("15", "5"), square), "false"},
		// A clockwise ring stands for the rest of the earth.
		{c("ST_WITHIN", pt("5", "5"), clockwise), "false"},
		{c("ST_WITHIN", pt("100", "-40"), clockwise), "true"},
		{c("ST_WITHIN", pt("5", "5"), holed), "false"},
		{c("ST_WITHIN", pt("2", "2"), holed), "true"},
		{c("ST_WITHIN", pt("20.5", "20.5"), multi), "true"},
		{c("ST_WITHIN", pt("10.5", "10.5"), multi), "false"},
		{c("ST_WITHIN", `{"type": "Polygon", "coordinates": [[[2, 2], [3, 2], [3, 3], [2, 3], [2, 2]]]}`, square), "true"},
		{c("ST_WITHIN", line, square), "false"},
		{c("ST_WITHIN", pt("5", "5"), pt("5", "5")), "true"},
		{c("ST_INTERSECTS", line, square), "true"},
		{c("ST_INTERSECTS", line, multi), "false"},
		{c("ST_INTERSECTS", square, `{"type": "Polygon", "coordinates": [[[-1, -1], [11, -1], [11, 11], [-1, 11], [-1, -1]]]}`), "true"},
		{c("ST_INTERSECTS", pt("5", "0"), `{"type": "LineString", "coordinates": [[0, 0], [10, 0]]}`), "true"},
		{c("ST_DISTANCE", pt("5", "5"), square), "0"},
		{c("ST_DISTANCE", pt("0", "0"), pt("0", "0")), "0"},
		{c("ST_DISTANCE", pt("0", "0"), s("x")), "undefined"},
		{c("ST_AREA", pt("0", "0")), "0"},
		{c("ST_AREA", line), "0"},
		{c("ST_ISVALID", `{"type": "Polygon", "coordinates": [[[0, 0], [10, 0], [10, 10], [0, 0.5]]]}`), "false"},
		{c("ST_ISVALID", `{"type": "Polygon", "coordinates": [[[0, 0], [10, 10], [10, 0], [0, 10], [0, 0]]]}`), "false"},
		{c("ST_ISVALID", `{"type": "LineString", "coordinates": [[0, 0]]}`), "false"},
		{c("ST_ISVALID", `{"type": "Circle", "coordinates": [0, 0]}`), "false"},
		{c("ST_ISVALID", `{"type": "Point", "coordinates": [181, 0]}`), "false"},
		{c("ST_ISVALID", multi), "true"},
		{c("ST_ISVALID", s("Point")), "undefined"},
		{c("ST_ISVALIDDETAILED", `{"type": "Point", "coordinates": [181, 0]}`), `{"valid": false, "reason": "Longitude values must be between -180 and 180 degrees."}`},
	})
	// Areas: a hole subtracts its area; a clockwise ring is the rest of the earth.
	area := func(g string) float64 { return evalArg(t, c("ST_AREA", g)).Num() }
	hole := area(`{"type": "Polygon", "coordinates": [[[4, 4], [6, 4], [6, 6], [4, 6], [4, 4]]]}`)
	if a, want := area(holed), area(square)-hole; !near(a, want, 1e-9) {
		t.Errorf("holed area %v, want %v", a, want)
	}
	earth := 4 * 3.141592653589793 * authalicRadius * authalicRadius
	if a, want := area(clockwise), earth-area(square); !near(a, want, 1e-9) {
		t.Errorf("clockwise area %v, want %v", a, want)
	}
	// The square's area is close to that of the band of latitudes it spans (its top edge, a
	// great circle, bulges a little to the north): R²·Δλ·(sin β₂ - sin β₁) in authalic terms.
	band := authalicRadius * authalicRadius * (10 * math.Pi / 180) * math.Sin(authalicLat(10*math.Pi/180))
	if a := area(square); !near(a, band, 4e-3) || a < band {
		t.Errorf("10° square area %v, band %v", a, band)
	}
	// Distances: one degree of the equator is a·π/180; one degree of meridian from the
	// equator is the WGS-84 meridian arc, 110574.3886 m.
	dist := func(a, b string) float64 { return evalArg(t, c("ST_DISTANCE", a, b)).Num() }
	if d := dist(pt("0", "0"), pt("1", "0")); !near(d, wgsA*math.Pi/180, 1e-12) {
		t.Errorf("1° of equator: %v", d)
	}
	if d := dist(pt("0", "0"), pt("0", "1")); !near(d, 110574.38855779878, 1e-10) {
		t.Errorf("1° of meridian: %v", d)
	}
	// A point's distance to a polygon is to its nearest edge, the great circle from (0, 10) to
	// (10, 10), which passes through latitude 10.0377° at longitude 5.
	top := math.Atan(math.Tan(10*math.Pi/180)/math.Cos(5*math.Pi/180)) * 180 / math.Pi
	if d, want := dist(pt("5", "11"), square), dist(pt("5", "11"), pt("5", strconv.FormatFloat(top, 'g', -1, 64))); !near(d, want, 1e-6) {
		t.Errorf("point to polygon: %v, want %v", d, want)
	}
}

func near(a, b, rel float64) bool {
	d := a - b
	if d < 0 {
		d = -d
	}
	if b < 0 {
		b = -b
	}
	return d <= rel*b
}
