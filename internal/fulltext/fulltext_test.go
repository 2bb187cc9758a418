package fulltext

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	snowball "github.com/blevesearch/snowballstem"
	"github.com/blevesearch/snowballstem/english"
)

func TestAnalyze(t *testing.T) {
	for _, c := range []struct {
		lang, text string
		want       []string
	}{
		{"en-US", "The runners are running, RUNNING!", []string{"runner", "run", "run"}},
		{"en-us", "Azure Cosmos DB: full-text search", []string{"azur", "cosmos", "db", "full", "text", "search"}},
		{"en-US", "", nil},
		{"en-US", "the and of", nil},
		{"de-DE", "Die Häuser", []string{"die", "haus"}},
		{"fr-FR", "les chanteuses", []string{"le", "chanteux"}},
		{"es-ES", "corriendo", []string{"corr"}},
		{"xx-XX", "Unknown Languages", []string{"unknown", "languages"}},
		{"en-US", "数据库 42", []string{"数据库", "42"}},
	} {
		if got := Analyze(c.lang, c.text); !slices.Equal(got, c.want) {
			t.Errorf("Analyze(%q, %q) = %q, want %q", c.lang, c.text, got, c.want)
		}
	}
}

// Remembered stems are the stems: over more distinct words than a language remembers (so its
// memory starts afresh on the way) and each word again, Analyze gives what the stemmer gives.
func TestStemCache(t *testing.T) {
	var words []string
	for i := range stemCacheSize + 1000 {
		words = append(words, fmt.Sprintf("Running%dnesses", i))
	}
	text := strings.Join(words, " ")
	for round := range 2 {
		got := Analyze("en-US", text)
		for i, w := range words {
			env := snowball.NewEnv(strings.ToLower(w))
			english.Stem(env)
			if got[i] != env.Current() {
				t.Fatalf("round %d: %q gave %q, the stemmer %q", round, w, got[i], env.Current())
			}
		}
	}
}

// TestScoreMatchesReference checks BM25 against the formula computed apart (in Python, float64)
// on a corpus of three documents: "cat sat mat", "dog sat" and "cat cat dog".
func TestScoreMatchesReference(t *testing.T) {
	c := Corpus{Docs: 3, Terms: 8, Freq: map[string]int{"cat": 2, "dog": 2, "sat": 2, "mat": 1}}
	for _, k := range []struct {
		query  []string
		tf     map[string]int
		length int
		want   float64
	}{
		// idf(cat) = ln(1 + 1.5/2.5); the third document: tf 2, length 3, average 8/3.
		{[]string{"cat"}, map[string]int{"cat": 2, "dog": 1}, 3, 0.6243067075264112},
		{[]string{"cat"}, map[string]int{"cat": 1, "sat": 1, "mat": 1}, 3, 0.44713858782297017},
		{[]string{"cat", "dog", "cat"}, map[string]int{"cat": 2, "dog": 1}, 3, 1.0714452953493814},
		{[]string{"bird"}, map[string]int{"cat": 2, "dog": 1}, 3, 0},
	} {
		if got := c.Score(k.query, k.tf, k.length); math.Abs(got-k.want) > 1e-12 {
			t.Errorf("Score(%q, %v) = %.16g, want %.16g", k.query, k.tf, got, k.want)
		}
	}
	if got := (Corpus{}).Score([]string{"cat"}, map[string]int{"cat": 1}, 1); got != 0 {
		t.Errorf("an empty corpus scores %v, want 0", got)
	}
}
