package epk_test

import (
	"encoding/json"
	"fmt"
	"os"
	"testing"

	"github.com/partita-db/partita/internal/conformance"
	"github.com/partita-db/partita/internal/epk"
)

type vectorCase struct {
	Kind       string          `json:"kind"`
	Components json.RawMessage `json:"components"`
	Hex        string          `json:"hex"`
}

// decodeKey turns a JSON components array into a Key; {"$undefined":true}
// stands for Undefined. infinity is true for the bare string "Infinity".
func decodeKey(raw json.RawMessage) (k epk.Key, infinity bool, err error) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		if s == "Infinity" {
			return nil, true, nil
		}
		return nil, false, fmt.Errorf("unexpected components string %q", s)
	}
	var items []any
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, false, err
	}
	k = epk.Key{}
	for _, it := range items {
		switch v := it.(type) {
		case nil:
			k = append(k, epk.Null())
		case bool:
			k = append(k, epk.Bool(v))
		case float64:
			k = append(k, epk.Number(v))
		case string:
			k = append(k, epk.String(v))
		case map[string]any:
			if u, _ := v["$undefined"].(bool); !u || len(v) != 1 {
				return nil, false, fmt.Errorf("unexpected object component %v", v)
			}
			k = append(k, epk.Undefined())
		default:
			return nil, false, fmt.Errorf("unexpected component %T", it)
		}
	}
	return k, false, nil
}

func TestVectors(t *testing.T) {
	data, err := os.ReadFile(conformance.Path(t, "epk-vectors.json"))
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Cases []vectorCase `json:"cases"`
	}
	if err := json.Unmarshal(data, &file); err != nil {
		t.Fatalf("parse vectors: %v", err)
	}
	if len(file.Cases) == 0 {
		t.Fatal("no cases in vectors file")
	}
	counts := map[string]int{}
	for i, c := range file.Cases {
		k, inf, err := decodeKey(c.Components)
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		name := fmt.Sprintf("%d/%s/%s", i, c.Kind, shorten(string(c.Components)))
		var got string
		switch {
		case inf && c.Kind == "binary_encoding":
			got = epk.Max.Hex() // the maximum component encodes as Max itself
		case inf:
			t.Fatalf("case %d: Infinity is only expected in binary_encoding cases", i)
		case c.Kind == "binary_encoding":
			got = epk.EPK(epk.BinaryEncode(k)).Hex()
		case c.Kind == "v1":
			got = epk.HashV1(k).Hex()
			if s := epk.SchemeV1.Hash(k).Hex(); s != got {
				t.Errorf("%s: SchemeV1.Hash %s != HashV1 %s", name, s, got)
			}
		case c.Kind == "v2":
			got = epk.HashV2(k).Hex()
			if s := epk.SchemeV2.Hash(k).Hex(); s != got {
				t.Errorf("%s: SchemeV2.Hash %s != HashV2 %s", name, s, got)
			}
			// A one-component MultiHash key is its v2 EPK.
			if len(k) <= 1 {
				if m := epk.HashMulti(k).Hex(); m != got {
					t.Errorf("%s: HashMulti %s != HashV2 %s", name, m, got)
				}
			}
		default:
			t.Fatalf("case %d: unknown kind %q", i, c.Kind)
		}
		if got != c.Hex {
			t.Errorf("%s:\n got  %s\n want %s", name, got, c.Hex)
		}
		counts[c.Kind]++
	}
	t.Logf("checked %d cases: %v", len(file.Cases), counts)
}

func shorten(s string) string {
	if len(s) > 40 {
		return s[:37] + "..."
	}
	return s
}

func TestHashMultiIsConcatenatedV2(t *testing.T) {
	keys := []epk.Key{
		{epk.String("tenant-1"), epk.String("user-42")},
		{epk.String("tenant-1"), epk.Number(7), epk.Bool(true)},
		{epk.Null(), epk.Undefined(), epk.String("")},
		{epk.Number(5.5), epk.Bool(false)},
	}
	for _, k := range keys {
		var want epk.EPK
		for _, v := range k {
			want += epk.HashV2(epk.Key{v})
		}
		got := epk.HashMulti(k)
		if got != want {
			t.Errorf("HashMulti(%v) = %s, want %s", k, got.Hex(), want.Hex())
		}
		if len(got) != 16*len(k) {
			t.Errorf("HashMulti(%v) has %d bytes, want %d", k, len(got), 16*len(k))
		}
		if s := epk.SchemeMulti.Hash(k); s != got {
			t.Errorf("SchemeMulti.Hash differs from HashMulti for %v", k)
		}
		// Every prefix addresses a range holding the full key.
		for p := 0; p <= len(k); p++ {
			pre := epk.HashMulti(k[:p])
			if !epk.PrefixRange(pre).Contains(got) {
				t.Errorf("PrefixRange(%s) does not contain %s", pre.Hex(), got.Hex())
			}
		}
	}
	if epk.HashMulti(nil) != epk.Min || epk.HashV2(nil) != epk.Min || epk.HashV1(nil) != epk.Min {
		t.Error("empty key must hash to Min under every scheme")
	}
}
