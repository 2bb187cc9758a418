package epk_test

import (
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"math"
	"os"
	"strconv"
	"testing"

	"github.com/partita-db/partita/internal/conformance"
	"github.com/partita-db/partita/internal/epk"
)

// Token equals Cassandra's for every vector of the conformance file.
func TestTokenConformance(t *testing.T) {
	path := conformance.Path(t, "murmur3-token-vectors.json")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Cases []struct {
			Type  string          `json:"type"`
			Value json.RawMessage `json:"value"`
			Token int64           `json:"token"`
		} `json:"cases"`
	}
	if err := json.Unmarshal(raw, &file); err != nil {
		t.Fatal(err)
	}
	if len(file.Cases) == 0 {
		t.Fatal("no cases")
	}
	for _, c := range file.Cases {
		var key []byte
		switch c.Type {
		case "int", "bigint":
			n, err := strconv.ParseInt(string(c.Value), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			if c.Type == "int" {
				key = binary.BigEndian.AppendUint32(nil, uint32(int32(n)))
			} else {
				key = binary.BigEndian.AppendUint64(nil, uint64(n))
			}
		case "text", "varchar", "ascii":
			var s string
			if err := json.Unmarshal(c.Value, &s); err != nil {
				t.Fatal(err)
			}
			key = []byte(s)
		default:
			t.Fatalf("a case of type %q: the test does not know how to serialize it", c.Type)
		}
		if got := epk.Token(key); got != c.Token {
			t.Errorf("token(%s %s) = %d, want %d", c.Type, c.Value, got, c.Token)
		}
	}
}

// The hash under the tokens is Cassandra's variant of MurmurHash3: these are figures the Java
// driver's implementation gives (as published with the Go and Java drivers' tests), for every
// tail length and for tail bytes >= 0x80, which the variant sign-extends.
func TestTokenHash(t *testing.T) {
	series := []uint64{
		0x0000000000000000, 0x2ac9debed546a380, 0x649e4eaa7fc1708e, 0xce68f60d7c353bdb,
		0x0f95757ce7f38254, 0x0f04e459497f3fc1, 0x88c0a92586be0a27, 0x13eb9fb82606f7a6,
		0x8236039b7387354d, 0x4c1e87519fe738ba, 0x3f9652ac3effeb24, 0x3f33760ded9006c6,
		0xaed70a6631854cb1, 0x8a299a8f8e0e2da7, 0x624b675c779249a6, 0xa4b203bb1d90b9a3,
		0xa3293ad698ecb99a, 0xbc740023dbd50048, 0x3fe5ab9837d25cdd, 0x2d0338c1ca87d132,
	}
	s := ""
	for i, want := range series {
		if got := epk.Token([]byte(s)); got != int64(want) {
			t.Errorf("token(%q) = %x, want %x", s, got, want)
		}
		s += strconv.Itoa(i % 10)
	}
	for in, want := range map[string]uint64{
		"hello, world":                                 0x342fac623a5ebc8e,
		"19 Jan 2038 at 3:14:07 AM":                    0xb89e5988b737affc,
		"The quick brown fox jumps over the lazy dog.": 0xcd99481f9ee902c9,
	} {
		if got := epk.Token([]byte(in)); got != int64(want) {
			t.Errorf("token(%q) = %x, want %x", in, got, want)
		}
	}
	signed, _ := hex.DecodeString("00104327529fb645dd00b883ec39ae448bb800000400066a6b00")
	if got := epk.Token(signed); got != -9223371632693506265 {
		t.Errorf("token with tail bytes >= 0x80 = %d, want -9223371632693506265", got)
	}
	var blocks [1024]byte
	for i := range blocks {
		blocks[i] = byte(i)
	}
	if got := epk.Token(blocks[:]); got != 7627370222079200297 {
		t.Errorf("token of 1,024 bytes = %d", got)
	}
}

func TestCompositeKey(t *testing.T) {
	key, ok := epk.CompositeKey([][]byte{[]byte("theo"), {0, 0, 0, 7}})
	if !ok || hex.EncodeToString(key) != "0004"+"7468656f"+"00"+"0004"+"00000007"+"00" {
		t.Fatalf("composite = %x", key)
	}
	if _, ok := epk.CompositeKey([][]byte{make([]byte, math.MaxUint16+1)}); ok {
		t.Fatal("a component past 65,535 bytes was accepted")
	}
}

// TokenEPK keeps the ring's order, stays inside the EPK space, and FirstToken inverts it; an
// EPK between two tokens' images starts at the later token.
func TestTokenEPK(t *testing.T) {
	tokens := []int64{math.MinInt64, math.MinInt64 + 1, -1 << 62, -1, 0, 1, 1 << 62, math.MaxInt64 - 1, math.MaxInt64}
	for i := range 1000 {
		tokens = append(tokens, int64(uint64(i)*0x9E3779B97F4A7C15))
	}
	for _, tok := range tokens {
		e := epk.TokenEPK(tok)
		if !epk.All.Contains(e) {
			t.Fatalf("TokenEPK(%d) = %s, outside the EPK space", tok, e.Hex())
		}
		if got, ok := epk.FirstToken(e); !ok || got != tok {
			t.Fatalf("FirstToken(TokenEPK(%d)) = %d, %v", tok, got, ok)
		}
		if got, _ := epk.FirstToken(e + "\x00\x00"); got != tok {
			t.Fatalf("trailing zeros moved token %d to %d", tok, got)
		}
		if tok != math.MaxInt64 {
			if got, ok := epk.FirstToken(e + "\x01"); !ok || got != tok+1 {
				t.Fatalf("just past token %d's EPK: %d, %v", tok, got, ok)
			}
			if !(e < epk.TokenEPK(tok+1)) {
				t.Fatalf("TokenEPK is not increasing at %d", tok)
			}
		}
	}
	if got, ok := epk.FirstToken(epk.Min); !ok || got != math.MinInt64 {
		t.Fatalf("FirstToken(Min) = %d, %v", got, ok)
	}
	if _, ok := epk.FirstToken(epk.Max); ok {
		t.Fatal("a token at or past Max")
	}
	if _, ok := epk.FirstToken(epk.TokenEPK(math.MaxInt64) + "\x01"); ok {
		t.Fatal("a token past the last one")
	}
	// The ranges a container gets for v2 keys are equal arcs of the ring: four cut it at
	// exactly -2^62, 0 and 2^62, and the last ends past every token.
	ranges := epk.InitialRanges(epk.SchemeV2, 4)
	for i, r := range ranges[1:] {
		if got, _ := epk.FirstToken(r.Min); got != int64(i-1)<<62 {
			t.Errorf("boundary %d at token %d, want %d", i+1, got, int64(i-1)<<62)
		}
	}
	if !ranges[3].Contains(epk.TokenEPK(math.MaxInt64)) {
		t.Error("the last token is not in the last range")
	}
}
