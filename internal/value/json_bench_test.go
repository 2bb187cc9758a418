package value

import (
	"strconv"
	"strings"
	"testing"
)

// benchItem builds an item of about 1 KB, mostly strings, so that string decoding dominates
// (an array rather than many members, since Obj checks for duplicate keys in quadratic time).
// With escapes, each string carries an escape or a non-ASCII character.
func benchItem(escapes bool) []byte {
	var b strings.Builder
	b.WriteString(`{"id":"item-0001","pk":"tenant-42","n":12.5,"tags":[`)
	for i := 0; b.Len() < 1000; i++ {
		s := "some plain text value " + strconv.Itoa(i)
		if escapes {
			switch i % 3 {
			case 0:
				s = `line one\nline \"two\" ` + strconv.Itoa(i)
			case 1:
				s = `caf\u00e9 \ud83d\ude00 tab\t` + strconv.Itoa(i)
			case 2:
				s = "naïve résumé " + strconv.Itoa(i)
			}
		}
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"` + s + `"`)
	}
	b.WriteString(`]}`)
	return []byte(b.String())
}

func BenchmarkParse(b *testing.B) {
	for _, bc := range []struct {
		name    string
		escapes bool
	}{{"plain", false}, {"escapes", true}} {
		body := benchItem(bc.escapes)
		if _, err := Parse(body); err != nil {
			b.Fatal(err)
		}
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Parse(body); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
