package fulltext

import (
	"strings"
	"sync"
	"sync/atomic"
	"unicode"

	snowball "github.com/blevesearch/snowballstem"
	"github.com/blevesearch/snowballstem/english"
	"github.com/blevesearch/snowballstem/french"
	"github.com/blevesearch/snowballstem/german"
	"github.com/blevesearch/snowballstem/italian"
	"github.com/blevesearch/snowballstem/portuguese"
	"github.com/blevesearch/snowballstem/spanish"
)

// stemmers by the language's first two letters; a language without one is not stemmed.
var stemmers = map[string]func(*snowball.Env) bool{
	"en": english.Stem, "de": german.Stem, "es": spanish.Stem, "fr": french.Stem,
	"it": italian.Stem, "pt": portuguese.Stem,
}

// englishStopWords are words too common to tell English documents apart: the short list
// search engines have long used.
var englishStopWords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`a an and are as at be but by for if in into is it no not of on
		or such that the their then there these they this to was will with`) {
		englishStopWords[w] = true
	}
}

// Analyze returns the terms of text in language (e.g. "en-US"), in order, with repeats.
func Analyze(language, text string) []string {
	var terms []string
	Each(language, text, func(term string) { terms = append(terms, term) })
	return terms
}

// Each calls fn with every term of text in language, in order, with repeats.
func Each(language, text string, fn func(term string)) {
	lang := strings.ToLower(language)
	if len(lang) > 2 {
		lang = lang[:2]
	}
	stem, cache := stemmers[lang], stems[lang]
	for len(text) > 0 {
		// The next word: a run of letters and digits.
		start := strings.IndexFunc(text, isWordRune)
		if start < 0 {
			return
		}
		text = text[start:]
		end := strings.IndexFunc(text, func(r rune) bool { return !isWordRune(r) })
		if end < 0 {
			end = len(text)
		}
		w := strings.ToLower(text[:end])
		text = text[end:]
		if lang == "en" && englishStopWords[w] {
			continue
		}
		if stem != nil {
			w = cache.of(w, stem)
		}
		if w != "" {
			fn(w)
		}
	}
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// Stemming a word is a Snowball run, several times the cost of the rest of its analysis, and
// text repeats its words: a ranking analyses the text of every item that holds a search term.
// So each language remembers the stems it computed, up to stemCacheSize words; when it holds
// that many it starts afresh, which bounds its memory (about 100 bytes a word) whatever the
// text.
const stemCacheSize = 1 << 16

// stemCache is one language's remembered stems.
type stemCache struct {
	m atomic.Pointer[sync.Map] // word -> stem
	n atomic.Int64             // words in m, about
}

var stems = func() map[string]*stemCache {
	m := map[string]*stemCache{}
	for lang := range stemmers {
		m[lang] = new(stemCache)
		m[lang].m.Store(new(sync.Map))
	}
	return m
}()

// of is the stem of w, remembered or computed by stem.
func (c *stemCache) of(w string, stem func(*snowball.Env) bool) string {
	m := c.m.Load()
	if s, ok := m.Load(w); ok {
		return s.(string)
	}
	env := snowball.NewEnv(w)
	stem(env)
	s := env.Current()
	if c.n.Add(1) > stemCacheSize {
		c.n.Store(0)
		c.m.Store(new(sync.Map))
		return s
	}
	// The word is a slice of the text: keep a copy, not the text.
	m.Store(strings.Clone(w), s)
	return s
}
