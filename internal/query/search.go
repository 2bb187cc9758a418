package query

import (
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/fulltext"
	"github.com/partita-db/partita/internal/indexing"
	"github.com/partita-db/partita/internal/searchpolicy"
	"github.com/partita-db/partita/internal/value"
	"github.com/partita-db/partita/internal/vectorindex"
)

// This file holds Cosmos DB's vector and full-text search: VectorDistance, FullTextContains,
// FullTextContainsAll, FullTextContainsAny, FullTextScore, RRF and ORDER BY RANK.
//
// Unlike the other built-ins these are evaluated with their argument expressions: the path
// of their first argument picks what the container's policies say about it (the distance
// function of c.embedding, the language of c.text; Env.Vectors and Env.FullText). Scores are
// exact: VectorDistance computes the distance of every vector it is given, and FullTextScore
// is BM25 over statistics gathered from every item the query reads (gatherCorpus), so they
// do not depend on how the container is partitioned.

// searchFunc is one search function.
type searchFunc struct {
	minArgs, maxArgs int // maxArgs < 0: variadic
	// scoring functions may appear only in ORDER BY RANK (FullTextScore also inside RRF).
	scoring bool
	eval    func(ev *evaluator, x Call, r row) (value.Value, error)
}

// searchFunction returns the search function name (upper case), if it is one.
func searchFunction(name string) (searchFunc, bool) {
	switch name {
	case "VECTORDISTANCE":
		return searchFunc{2, 4, false, (*evaluator).vectorDistance}, true
	case "FULLTEXTCONTAINS":
		return searchFunc{2, 2, false, (*evaluator).fullTextContains}, true
	case "FULLTEXTCONTAINSALL", "FULLTEXTCONTAINSANY":
		return searchFunc{2, -1, false, (*evaluator).fullTextContains}, true
	case "FULLTEXTSCORE":
		return searchFunc{2, -1, true, (*evaluator).fullTextScore}, true
	case "RRF":
		return searchFunc{2, -1, true, func(*evaluator, Call, row) (value.Value, error) {
			// RRF ranks the whole result (fuse); it has no value for one row.
			return value.Undef(), nil
		}}, true
	}
	return searchFunc{}, false
}

// searchPath is the property path an argument reads (c.a.b gives [a b]), nil when it is not
// a path. The name it starts from is not checked: only the root's paths are in policies.
func searchPath(e Expr) []string {
	segs, _ := propertyPath(e, "")
	return segs
}

// Vector search.

// vectorSettings are the distance function and data type VectorDistance uses, and how wide
// an index search looks.
type vectorSettings struct {
	distance string // as policies spell it: cosine, dotproduct or euclidean
	dataType string // float32, float16, int8 or uint8
	// listMultiplier is searchListSizeMultiplier: an index search's candidate list is this
	// many times TOP; 0 for the index's default.
	listMultiplier int
}

// vectorSettings reads a VectorDistance call's settings: its options argument's, else the
// policy's for the path of its first argument, else cosine over float32. options is the
// evaluated fourth argument (undefined when absent).
func (ev *evaluator) vectorSettings(x Call, options value.Value) (vectorSettings, error) {
	s := vectorSettings{distance: "cosine", dataType: "float32"}
	if emb, ok := ev.env.Vectors.Lookup(searchPath(x.Args[0])); ok {
		s.distance, s.dataType = emb.Distance, emb.DataType
	}
	switch options.Kind() {
	case value.Undefined:
	case value.Object:
		for _, m := range options.Members() {
			var allowed []string
			var into *string
			switch strings.ToLower(m.Key) {
			case "distancefunction":
				allowed, into = searchpolicy.Distances, &s.distance
			case "datatype":
				allowed, into = searchpolicy.DataTypes, &s.dataType
			case "searchlistsizemultiplier":
				if n := m.Val.Num(); m.Val.Kind() != value.Number || n != math.Trunc(n) || n < 1 || n > 100 {
					return s, fault.New(fault.BadRequest, "VectorDistance's option searchListSizeMultiplier must be a whole number from 1 to 100")
				}
				s.listMultiplier = int(m.Val.Num())
				continue
			default:
				continue // other tuning (quantizedVectorListMultiplier, filterPriority): defaults
			}
			name := strings.ToLower(m.Val.Str())
			if m.Val.Kind() != value.String || !slices.Contains(allowed, name) {
				return s, fault.New(fault.BadRequest, "VectorDistance's option %s must be one of %s", m.Key, strings.Join(allowed, ", "))
			}
			*into = name
		}
	default:
		return s, fault.New(fault.BadRequest, "VectorDistance's fourth argument must be an object of options, as in {\"distanceFunction\": \"cosine\"}")
	}
	return s, nil
}

// mostSimilarFirst is the order of VectorDistance's scores from most to least similar:
// descending for cosine and dot product, ascending for euclidean distance.
func (s vectorSettings) mostSimilarFirst() (desc bool) { return s.distance != "euclidean" }

func (ev *evaluator) vectorDistance(x Call, r row) (value.Value, error) {
	args, err := ev.evalArgs(x.Args, r)
	if err != nil {
		return value.Undef(), err
	}
	opts := value.Undef()
	if len(args) == 4 {
		opts = args[3]
	}
	s, err := ev.vectorSettings(x, opts)
	if err != nil {
		return value.Undef(), err
	}
	if len(args) >= 3 && args[2].Kind() != value.Boolean {
		return value.Undef(), fault.New(fault.BadRequest, "VectorDistance's third argument (brute force) must be true or false")
	}
	a, okA := vectorValue(args[0], s.dataType)
	b, okB := vectorValue(args[1], s.dataType)
	if !okA || !okB || len(a) != len(b) || len(a) == 0 {
		return value.Undef(), nil
	}
	m, _ := vectorindex.ParseMetric(s.distance) // one of searchpolicy.Distances
	return value.Num(m.Score(a, b)), nil
}

// vectorValue reads a vector of the data type: an array of numbers the type holds (see
// vectorindex.Convert).
func vectorValue(v value.Value, dataType string) ([]float32, bool) {
	dt, err := vectorindex.ParseDataType(dataType)
	nums, ok := v.Numbers()
	if err != nil || !ok {
		return nil, false
	}
	return vectorindex.Convert(dt, nums)
}

// Full-text search.

// fullTextLanguage is the language of the text at the path of a full-text call's first
// argument.
func (ev *evaluator) fullTextLanguage(x Call) string {
	return ev.env.FullText.Language(searchPath(x.Args[0]))
}

// fullTextContains is FullTextContains (one search string), FullTextContainsAll and
// FullTextContainsAny (several): a search string is contained when each of its terms is
// among the text's. A string with no terms (only stop words, say) is never contained.
func (ev *evaluator) fullTextContains(x Call, r row) (value.Value, error) {
	args, err := ev.evalArgs(x.Args, r)
	if err != nil {
		return value.Undef(), err
	}
	if args[0].Kind() != value.String {
		return value.Undef(), nil
	}
	lang := ev.fullTextLanguage(x)
	have := map[string]bool{}
	fulltext.Each(lang, args[0].Str(), func(t string) { have[t] = true })
	any := x.Name == "FULLTEXTCONTAINSANY"
	for _, a := range args[1:] {
		if a.Kind() != value.String {
			return value.Undef(), nil
		}
		terms := fulltext.Analyze(lang, a.Str())
		ok := len(terms) > 0
		for _, t := range terms {
			ok = ok && have[t]
		}
		if ok && any {
			return value.Bool(true), nil
		}
		if !ok && !any {
			return value.Bool(false), nil
		}
	}
	return value.Bool(!any), nil
}

// scoreTerms are the analyzed search terms of a FullTextScore call: its arguments after the
// path, strings or one array of strings. ok is false when one is not a string.
func scoreTerms(lang string, args []value.Value) (terms []string, ok bool) {
	if len(args) == 1 && args[0].Kind() == value.Array {
		args = args[0].Elems()
	}
	for _, a := range args {
		if a.Kind() != value.String {
			return nil, false
		}
		terms = append(terms, fulltext.Analyze(lang, a.Str())...)
	}
	return terms, true
}

// corpusKey names the statistics of one path in one language.
func corpusKey(lang string, segs []string) string {
	return lang + "\x00" + strings.Join(segs, "\x00")
}

func (ev *evaluator) fullTextScore(x Call, r row) (value.Value, error) {
	args, err := ev.evalArgs(x.Args, r)
	if err != nil {
		return value.Undef(), err
	}
	lang := ev.fullTextLanguage(x)
	terms, ok := scoreTerms(lang, args[1:])
	if !ok {
		return value.Undef(), fault.New(fault.BadRequest, "FullTextScore's search terms must be strings")
	}
	if args[0].Kind() != value.String {
		return value.Num(0), nil
	}
	c := ev.env.corpus[corpusKey(lang, searchPath(x.Args[0]))]
	if c == nil {
		return value.Num(0), nil
	}
	tf := map[string]int{}
	n := 0
	fulltext.Each(lang, args[0].Str(), func(t string) { tf[t]++; n++ })
	return value.Num(c.Score(terms, tf, n)), nil
}

// scoreCalls are the FullTextScore calls of an ORDER BY RANK expression.
func scoreCalls(e Expr) []Call {
	var calls []Call
	walk(e, func(x Expr) {
		if c, ok := x.(Call); ok && !c.UDF && c.Name == "FULLTEXTSCORE" {
			calls = append(calls, c)
		}
	})
	return calls
}

// CorpusReader is a part of a source that can give the BM25 statistics of its items' text
// from a full-text index, without reading them.
type CorpusReader interface {
	// FullTextStats returns, for the items the part holds, how many there are, how many
	// tokens their text at path (an indexing.FullTextTermPath) holds in all, and in how many
	// items' text each of tokens (analyzed) appears. ok is false when the part's index cannot
	// tell (not built for the path, say): the caller reads the items.
	FullTextStats(path string, tokens []string) (st TextStats, ok bool, err error)
}

// TextStats are the statistics a CorpusReader gives.
type TextStats struct {
	Items, Tokens int64
	Freq          []int64 // by token asked for
}

// scoredText is what the query's FullTextScore calls of one path and language need counted.
type scoredText struct {
	lang  string
	segs  []string
	terms map[string]bool
}

// gatherCorpus counts what BM25 needs for the query's FullTextScore calls: the items, the
// terms of the text at each scored path, and the items whose text holds each search term.
// It runs before the query, over the whole source (the WHERE clause does not narrow the
// statistics), part by part: from a part's full-text index when it can tell (CorpusReader),
// otherwise by reading every item of the part once. Both give the same counts. It leaves them
// in ev.env.corpus.
func (p *Prepared) gatherCorpus(ev *evaluator, src Reader, noIndex bool) error {
	byKey := map[string]*scoredText{}
	for _, o := range p.q.OrderBy {
		if !o.Rank {
			continue
		}
		for _, c := range scoreCalls(o.Expr) {
			segs := searchPath(c.Args[0])
			if segs == nil {
				continue // not a path of the items: every score is 0
			}
			args, err := ev.evalArgs(c.Args[1:], nil)
			if err != nil {
				return err
			}
			lang := ev.fullTextLanguage(c)
			terms, ok := scoreTerms(lang, args)
			if !ok {
				return fault.New(fault.BadRequest, "FullTextScore's search terms must be strings")
			}
			k := corpusKey(lang, segs)
			if byKey[k] == nil {
				byKey[k] = &scoredText{lang: lang, segs: segs, terms: map[string]bool{}}
			}
			for _, t := range terms {
				byKey[k].terms[t] = true
			}
		}
	}
	if len(byKey) == 0 {
		return nil
	}
	corpus := map[string]*fulltext.Corpus{}
	for k := range byKey {
		corpus[k] = &fulltext.Corpus{Freq: map[string]int{}}
	}
	ev.env.corpus = corpus
	parts := []Reader{src}
	if s, ok := src.(Splitter); ok {
		parts = s.Parts()
	}
	for _, part := range parts {
		if cr, ok := part.(CorpusReader); ok && !noIndex {
			if ok, err := corpusFromIndex(cr, byKey, corpus); ok || err != nil {
				continue
			}
		}
		if err := scanCorpus(ev, part, byKey, corpus); err != nil {
			return err
		}
	}
	return nil
}

// corpusFromIndex adds a part's statistics from its full-text index to corpus, for every
// scored path, or nothing when the index cannot tell them for one of them.
func corpusFromIndex(cr CorpusReader, byKey map[string]*scoredText, corpus map[string]*fulltext.Corpus) (bool, error) {
	type counted struct {
		key    string
		tokens []string
		st     TextStats
	}
	var all []counted
	for k, s := range byKey {
		c := counted{key: k}
		for t := range s.terms {
			c.tokens = append(c.tokens, t)
		}
		slices.Sort(c.tokens)
		st, ok, err := cr.FullTextStats(indexing.FullTextTermPath(value.TermPath(s.segs)), c.tokens)
		if err != nil || !ok {
			return false, err
		}
		c.st = st
		all = append(all, c)
	}
	for _, c := range all {
		co := corpus[c.key]
		co.Docs += int(c.st.Items)
		co.Terms += int(c.st.Tokens)
		for i, t := range c.tokens {
			if n := int(c.st.Freq[i]); n > 0 {
				co.Freq[t] += n
			}
		}
	}
	return true, nil
}

// scanCorpus adds the statistics of the items of src to corpus, reading each once.
func scanCorpus(ev *evaluator, src Reader, byKey map[string]*scoredText, corpus map[string]*fulltext.Corpus) error {
	return src.Scan(nil, func(pos Position, doc []byte) (bool, error) {
		ev.stats.ItemsLoaded++
		ev.stats.BytesLoaded += len(doc)
		v, err := value.Parse(doc)
		if err != nil {
			return false, fault.New(fault.Internal, "stored item %d is not valid JSON: %w", pos.Seq, err)
		}
		for k, s := range byKey {
			c := corpus[k]
			c.Docs++
			text := v
			for _, seg := range s.segs {
				text = text.Get(seg)
			}
			if text.Kind() != value.String {
				continue
			}
			seen := map[string]bool{}
			fulltext.Each(s.lang, text.Str(), func(t string) {
				c.Terms++
				if s.terms[t] && !seen[t] {
					seen[t] = true
					c.Freq[t]++
				}
			})
		}
		return true, nil
	})
}

// fromTextIndex answers a full-text ranking (SELECT TOP k ... ORDER BY RANK
// FullTextScore(c.path, terms)) from the parts' full-text indexes. Only an item whose text
// holds a search term scores above 0 (each term adds a positive BM25 weight), so when at
// least k results do, they are the ones every other result ranks after: the query then reads
// only the items holding a term (in item order, so that ties break as they would over all
// items), and its WHERE, projection and scores run on them as on any. When fewer than k do,
// the result also takes items scoring 0, in item order: ok is false, and the caller reads
// every item. ok is false too when the query is not such a ranking.
func (p *Prepared) fromTextIndex(ev *evaluator, src Reader, noIndex bool) (all []value.Value, ok bool, err error) {
	q := p.q
	s, isSplit := src.(Splitter)
	if noIndex || !isSplit || !p.ranked() || p.fused() || p.derived != nil || p.grouped || q.Select.Distinct || q.Offset != nil ||
		q.Select.Top == nil || q.From == nil || len(q.From.Joins) > 0 || q.From.Source.In {
		return nil, false, nil
	}
	if _, ok := q.From.Source.Expr.(Ident); !ok {
		return nil, false, nil
	}
	c, isCall := q.OrderBy[0].Expr.(Call)
	if !isCall || c.UDF || c.Name != "FULLTEXTSCORE" {
		return nil, false, nil
	}
	segs, isPath := rootPath(c.Args[0], q.From.Source.Alias)
	if !isPath {
		return nil, false, nil
	}
	args, err := ev.evalArgs(c.Args[1:], nil)
	if err != nil {
		return nil, false, err
	}
	terms, _ := scoreTerms(ev.fullTextLanguage(c), args)
	k := p.count(ev, q.Select.Top)
	if len(terms) == 0 || k == 0 {
		return nil, false, nil
	}
	r := IndexRange{Path: indexing.FullTextTermPath(value.TermPath(segs))}
	seen := map[string]bool{}
	for _, t := range terms {
		if !seen[t] {
			seen[t] = true
			r.Values = append(r.Values, indexing.FullTextToken(t))
		}
	}
	merged := &partial{}
	for _, part := range s.Parts() {
		ir, ok := part.(IndexedReader)
		if !ok || !ir.Indexes(r.Path) {
			return nil, false, nil
		}
		pa, err := p.gather(ev, p.scanInput(ev, indexed{ir, r}))
		if err != nil {
			return nil, false, err
		}
		merged.merge(pa)
	}
	scored := 0
	for _, res := range merged.results {
		if k := res.keys[0]; k.Kind() == value.Number && k.Num() > 0 {
			scored++
		}
	}
	if scored < k {
		return nil, false, nil
	}
	ev.stats.Index.Filter = r.Path
	all, err = p.finish(ev, merged)
	return all, err == nil, err
}

// Ranking.

// ranked reports whether the query orders by RANK.
func (p *Prepared) ranked() bool { return len(p.q.OrderBy) == 1 && p.q.OrderBy[0].Rank }

// fused reports whether the query orders by RANK RRF(...).
func (p *Prepared) fused() bool {
	c, ok := p.q.OrderBy[0].Expr.(Call)
	return p.ranked() && ok && c.Name == "RRF"
}

// scoreDesc reports whether a scoring expression (FullTextScore, VectorDistance, RRF) ranks
// higher values first.
func (ev *evaluator) scoreDesc(e Expr) (bool, error) {
	c, ok := e.(Call)
	if !ok || c.Name != "VECTORDISTANCE" {
		return true, nil
	}
	opts := value.Undef()
	if len(c.Args) == 4 {
		var err error
		if opts, err = ev.eval(c.Args[3], nil); err != nil {
			return false, err
		}
	}
	s, err := ev.vectorSettings(c, opts)
	return s.mostSimilarFirst(), err
}

// scored reports whether the key orders by a search score: ORDER BY RANK, or VectorDistance.
func (o OrderItem) scored() bool {
	c, ok := o.Expr.(Call)
	return o.Rank || ok && !c.UDF && c.Name == "VECTORDISTANCE"
}

// orderDirections are the directions of the query's ORDER BY keys: as written, except for
// scores, which rank most relevant first (ORDER BY RANK, and VectorDistance without ASC or
// DESC). score marks the keys that are scores: a result without one (no vector) comes after
// those with one, whatever the direction.
func (p *Prepared) orderDirections(ev *evaluator) (desc, score []bool, err error) {
	desc, score = make([]bool, len(p.q.OrderBy)), make([]bool, len(p.q.OrderBy))
	for i, o := range p.q.OrderBy {
		desc[i] = o.Desc
		score[i] = o.scored()
		if o.Rank || score[i] && !o.Directed {
			if desc[i], err = ev.scoreDesc(o.Expr); err != nil {
				return nil, nil, err
			}
		}
	}
	return desc, score, nil
}

// rrfK is reciprocal rank fusion's constant: a result ranked r-th by a function adds
// weight/(rrfK + r) to its fused score. 60 is the value of the paper that introduced it.
const rrfK = 60

// rrfParts splits an RRF call's arguments into its scoring functions and its weights (nil
// when not given: every weight 1).
func rrfParts(c Call) (parts []Expr, weights Expr) {
	parts = c.Args
	if last, ok := c.Args[len(c.Args)-1].(Call); !ok || last.UDF {
		parts, weights = c.Args[:len(c.Args)-1], c.Args[len(c.Args)-1]
	}
	return parts, weights
}

// rankKeys evaluates a result's ORDER BY RANK key: the score, or for RRF each part's score.
func (ev *evaluator) rankKeys(e Expr, r row, keys []value.Value) ([]value.Value, error) {
	c, ok := e.(Call)
	if !ok || c.Name != "RRF" {
		k, err := ev.eval(e, r)
		return append(keys, k), err
	}
	parts, _ := rrfParts(c)
	for _, part := range parts {
		k, err := ev.eval(part, r)
		if err != nil {
			return keys, err
		}
		keys = append(keys, k)
	}
	return keys, nil
}

// fuse replaces the per-part scores of an ORDER BY RANK RRF query's results by their fused
// score: each part ranks the results by its own order, and a result's fused score is the
// sum over the parts of weight/(rrfK + its rank). A result a part gives no score (no vector,
// say), or a full-text score of 0 (none of the terms), gets nothing from that part.
func (p *Prepared) fuse(ev *evaluator, results []result) error {
	c := p.q.OrderBy[0].Expr.(Call)
	parts, wexpr := rrfParts(c)
	weights := make([]float64, len(parts))
	for i := range weights {
		weights[i] = 1
	}
	if wexpr != nil {
		w, err := ev.eval(wexpr, nil)
		if err != nil {
			return err
		}
		var ok bool
		if weights, ok = w.Numbers(); !ok || len(weights) != len(parts) {
			return fault.New(fault.BadRequest, "RRF's weights must be an array of %d numbers, one per scoring function", len(parts))
		}
	}
	fused := make([]float64, len(results))
	order := make([]int, len(results))
	for i, part := range parts {
		desc, err := ev.scoreDesc(part)
		if err != nil {
			return err
		}
		text := part.(Call).Name == "FULLTEXTSCORE"
		order = order[:0]
		for j := range results {
			if k := results[j].keys[i]; k.Kind() == value.Number && !(text && k.Num() == 0) {
				order = append(order, j)
			}
		}
		sort.SliceStable(order, func(a, b int) bool {
			x, y := results[order[a]].keys[i].Num(), results[order[b]].keys[i].Num()
			if desc {
				return x > y
			}
			return x < y
		})
		for rank, j := range order {
			fused[j] += weights[i] / float64(rrfK+rank+1)
		}
	}
	for j := range results {
		results[j].keys = []value.Value{value.Num(fused[j])}
	}
	return nil
}

// checkSearch refuses search functions where Cosmos does not take them: a scoring function
// (FullTextScore, RRF) anywhere but ORDER BY RANK, ORDER BY RANK beside other keys or over
// something other than a scoring function, and RRF over anything but scoring functions.
func checkSearch(q *Query) error {
	for _, o := range q.OrderBy {
		if !o.Rank {
			continue
		}
		if len(q.OrderBy) > 1 {
			return fault.New(fault.BadRequest, "ORDER BY RANK must be the query's only ORDER BY key")
		}
		c, ok := o.Expr.(Call)
		if !ok || c.UDF || c.Name != "FULLTEXTSCORE" && c.Name != "VECTORDISTANCE" && c.Name != "RRF" {
			return fault.New(fault.BadRequest, "ORDER BY RANK takes a scoring function: FullTextScore, VectorDistance or RRF")
		}
		if c.Name == "RRF" {
			parts, weights := rrfParts(c)
			if len(parts) < 2 {
				return fault.New(fault.BadRequest, "RRF fuses two or more scoring functions")
			}
			for _, part := range parts {
				pc, ok := part.(Call)
				if !ok || pc.UDF || pc.Name != "FULLTEXTSCORE" && pc.Name != "VECTORDISTANCE" {
					return fault.New(fault.BadRequest, "RRF's arguments must be FullTextScore or VectorDistance calls, then optionally an array of weights")
				}
				if err := noScoring(pc.Args); err != nil {
					return err
				}
			}
			if err := noScoring([]Expr{weights}); err != nil {
				return err
			}
		} else if err := noScoring(c.Args); err != nil {
			return err
		}
	}
	exprs := []Expr{q.Select.Value, q.Where}
	for _, it := range q.Select.Items {
		exprs = append(exprs, it.Expr)
	}
	exprs = append(exprs, q.GroupBy...)
	for _, o := range q.OrderBy {
		if !o.Rank {
			exprs = append(exprs, o.Expr)
		}
	}
	return noScoring(exprs)
}

// noScoring refuses FullTextScore and RRF in es.
func noScoring(es []Expr) error {
	var err error
	for _, e := range es {
		walk(e, func(x Expr) {
			if c, ok := x.(Call); ok && !c.UDF && err == nil {
				if f, ok := searchFunction(c.Name); ok && f.scoring {
					err = fault.New(fault.BadRequest, "%s may only be used in ORDER BY RANK", c.Name)
				}
			}
		})
	}
	return err
}

// evalArgs evaluates a call's arguments.
func (ev *evaluator) evalArgs(es []Expr, r row) ([]value.Value, error) {
	args := make([]value.Value, len(es))
	for i, a := range es {
		v, err := ev.eval(a, r)
		if err != nil {
			return nil, err
		}
		args[i] = v
	}
	return args, nil
}
