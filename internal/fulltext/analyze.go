package fulltext

import (
	"strings"
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
	stem := stemmers[lang]
	words := strings.FieldsFunc(text, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	for _, w := range words {
		w = strings.ToLower(w)
		if lang == "en" && englishStopWords[w] {
			continue
		}
		if stem != nil {
			env := snowball.NewEnv(w)
			stem(env)
			w = env.Current()
		}
		if w != "" {
			fn(w)
		}
	}
}
