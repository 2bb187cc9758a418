package query

import (
	"math"

	"github.com/partita-db/partita/internal/value"
)

// Spatial functions over GeoJSON Point, LineString, Polygon and MultiPolygon values, with
// coordinates [longitude, latitude] in degrees on the WGS-84 ellipsoid, the only reference
// system Cosmos supports. Arguments that are not valid GeoJSON make the result undefined.
//
// How Cosmos measures, as far as the documented numbers show:
//   - ST_DISTANCE follows the great ellipse, the section of the ellipsoid by the plane through
//     its centre and both points: the sample's 1907438.4213 m between two offices 25° of
//     longitude apart is reproduced to 0.1 mm, where the geodesic (Vincenty) is 8 cm shorter
//     and spheres are kilometres off.
//   - ST_AREA is the area on the authalic sphere (the sphere of the ellipsoid's area, points
//     mapped by authalic latitude) with great-circle edges: the sample's 735970283.05 m² is
//     reproduced to 0.1 m².
//   - Rings follow the left-hand rule: the interior lies to the left of each ring, so an outer
//     ring is counter-clockwise, holes are clockwise, and a clockwise outer ring stands for
//     the inverse region (documented for every spatial function).
//
// Containment and intersection are decided on the sphere with great-circle edges; that differs
// from the ellipsoid only for points within millimetres of an edge.
var spatialFunctions = map[string]builtin{
	"ST_DISTANCE":   fixed(2, pure(stDistance)),
	"ST_WITHIN":     fixed(2, pure(stWithin)),
	"ST_INTERSECTS": fixed(2, pure(stIntersects)),
	"ST_AREA":       fixed(1, pure(stArea)),
	"ST_ISVALID": fixed(1, pure(func(args []value.Value) value.Value {
		if args[0].Kind() != value.Object {
			return undef
		}
		_, reason := parseGeo(args[0])
		return boolV(reason == "")
	})),
	"ST_ISVALIDDETAILED": fixed(1, pure(func(args []value.Value) value.Value {
		if args[0].Kind() != value.Object {
			return undef
		}
		_, reason := parseGeo(args[0])
		if reason == "" {
			return value.Obj([]value.Member{{Key: "valid", Val: boolV(true)}})
		}
		return value.Obj([]value.Member{{Key: "valid", Val: boolV(false)}, {Key: "reason", Val: strV(reason)}})
	})),
}

// WGS-84.
const (
	wgsA = 6378137.0
	wgsF = 1 / 298.257223563
	wgsB = wgsA * (1 - wgsF)
)

type lonLat struct{ lon, lat float64 }

type geometry struct {
	typ   string       // Point, LineString, Polygon or MultiPolygon
	pos   []lonLat     // Point (one position) and LineString
	polys [][][]lonLat // Polygon (one) and MultiPolygon: polygons of rings
}

func (g geometry) areal() bool { return g.typ == "Polygon" || g.typ == "MultiPolygon" }

// parseGeo reads a GeoJSON geometry; reason is non-empty when v is not a valid one. The
// latitude message is the one the reference shows; the others follow its style.
func parseGeo(v value.Value) (geometry, string) {
	if v.Kind() != value.Object {
		return geometry{}, "The GeoJSON value must be an object."
	}
	t := v.Get("type")
	c := v.Get("coordinates")
	if t.Kind() != value.String {
		return geometry{}, "The GeoJSON object must have a string property \"type\"."
	}
	if c.Kind() != value.Array {
		return geometry{}, "The GeoJSON object must have an array property \"coordinates\"."
	}
	g := geometry{typ: t.Str()}
	var reason string
	switch g.typ {
	case "Point":
		var p lonLat
		p, reason = parsePosition(c)
		g.pos = []lonLat{p}
	case "LineString":
		g.pos, reason = parsePositions(c)
		if reason == "" && len(g.pos) < 2 {
			reason = "A LineString must have at least two positions."
		}
	case "Polygon":
		var rings [][]lonLat
		rings, reason = parseRings(c)
		g.polys = [][][]lonLat{rings}
	case "MultiPolygon":
		for _, pc := range c.Elems() {
			if pc.Kind() != value.Array {
				return g, "The coordinates of a MultiPolygon must be an array of Polygon coordinates."
			}
			var rings [][]lonLat
			if rings, reason = parseRings(pc); reason != "" {
				break
			}
			g.polys = append(g.polys, rings)
		}
	default:
		return g, "The GeoJSON type \"" + g.typ + "\" is not supported: use Point, LineString, Polygon or MultiPolygon."
	}
	return g, reason
}

func parsePosition(c value.Value) (lonLat, string) {
	if c.Kind() != value.Array || c.Len() < 2 || c.Index(0).Kind() != value.Number || c.Index(1).Kind() != value.Number {
		return lonLat{}, "A position must be an array of at least two numbers: longitude and latitude."
	}
	p := lonLat{c.Index(0).Num(), c.Index(1).Num()}
	switch {
	case !(p.lat >= -90 && p.lat <= 90):
		return p, "Latitude values must be between -90 and 90 degrees."
	case !(p.lon >= -180 && p.lon <= 180):
		return p, "Longitude values must be between -180 and 180 degrees."
	}
	return p, ""
}

func parsePositions(c value.Value) ([]lonLat, string) {
	if c.Kind() != value.Array {
		return nil, "The coordinates must be an array of positions."
	}
	out := make([]lonLat, 0, c.Len())
	for _, e := range c.Elems() {
		p, reason := parsePosition(e)
		if reason != "" {
			return nil, reason
		}
		out = append(out, p)
	}
	return out, ""
}

func parseRings(c value.Value) ([][]lonLat, string) {
	if c.Kind() != value.Array || c.Len() == 0 {
		return nil, "The coordinates of a Polygon must be a non-empty array of rings."
	}
	var rings [][]lonLat
	for _, rc := range c.Elems() {
		ring, reason := parsePositions(rc)
		if reason != "" {
			return nil, reason
		}
		switch {
		case len(ring) < 4:
			return nil, "A Polygon ring must have at least four positions."
		case ring[0] != ring[len(ring)-1]:
			return nil, "A Polygon ring must be closed: its first and last positions must be the same."
		}
		if selfIntersects(ring) {
			return nil, "A Polygon ring must not intersect itself."
		}
		rings = append(rings, ring)
	}
	return rings, ""
}

// Unit vectors on the sphere, from geodetic coordinates taken as spherical ones.

type vec3 [3]float64

func (a vec3) dot(b vec3) float64 { return a[0]*b[0] + a[1]*b[1] + a[2]*b[2] }
func (a vec3) cross(b vec3) vec3 {
	return vec3{a[1]*b[2] - a[2]*b[1], a[2]*b[0] - a[0]*b[2], a[0]*b[1] - a[1]*b[0]}
}
func (a vec3) scale(f float64) vec3 { return vec3{a[0] * f, a[1] * f, a[2] * f} }
func (a vec3) plus(b vec3) vec3     { return vec3{a[0] + b[0], a[1] + b[1], a[2] + b[2]} }
func (a vec3) norm() float64        { return math.Sqrt(a.dot(a)) }
func (a vec3) unit() vec3 {
	n := a.norm()
	if n == 0 {
		return a
	}
	return a.scale(1 / n)
}

func toRad(d float64) float64 { return d * math.Pi / 180 }

func (p lonLat) vec() vec3 {
	lon, lat := toRad(p.lon), toRad(p.lat)
	return vec3{math.Cos(lat) * math.Cos(lon), math.Cos(lat) * math.Sin(lon), math.Sin(lat)}
}

func lonLatOf(v vec3) lonLat {
	return lonLat{math.Atan2(v[1], v[0]) * 180 / math.Pi, math.Atan2(v[2], math.Hypot(v[0], v[1])) * 180 / math.Pi}
}

// orient is the sign of the triple product: positive when c lies to the left of a→b.
func orient(a, b, c vec3) float64 { return a.cross(b).dot(c) }

// crosses reports whether the arcs a-b and c-d cross at a point interior to both.
func crosses(a, b, c, d vec3) bool {
	acb := orient(a, c, b)
	bda := orient(b, d, a)
	cbd := orient(c, b, d)
	dac := orient(d, a, c)
	if acb == 0 || bda == 0 || cbd == 0 || dac == 0 {
		return false
	}
	return (acb > 0) == (bda > 0) && (bda > 0) == (cbd > 0) && (cbd > 0) == (dac > 0)
}

func selfIntersects(ring []lonLat) bool {
	n := len(ring) - 1
	if n > 2000 {
		return false // too costly to check; accepted as given
	}
	vs := make([]vec3, len(ring))
	for i, p := range ring {
		vs[i] = p.vec()
	}
	for i := 0; i < n; i++ {
		for j := i + 2; j < n; j++ {
			if i == 0 && j == n-1 {
				continue // adjacent through the closing point
			}
			if crosses(vs[i], vs[i+1], vs[j], vs[j+1]) {
				return true
			}
		}
	}
	return false
}

// ringContains reports whether p lies in the region to the left of the ring: a reference
// point just left of the first edge is inside, and every crossing of the arc from it to p
// toggles.
func ringContains(ring []lonLat, p vec3) bool {
	vs := make([]vec3, len(ring))
	for i, q := range ring {
		vs[i] = q.vec()
	}
	var ref vec3
	inside := true
	for i := 0; i+1 < len(vs); i++ {
		a, b := vs[i], vs[i+1]
		n := a.cross(b)
		if n.norm() < 1e-15 {
			continue
		}
		mid := a.plus(b).unit()
		eps := math.Min(1e-9, math.Acos(math.Max(-1, math.Min(1, a.dot(b))))*1e-3)
		ref = mid.plus(n.unit().scale(eps)).unit()
		break
	}
	if ref == (vec3{}) {
		return false
	}
	// If p is (nearly) antipodal to ref, the arc between them is undefined: go through an
	// intermediate point instead.
	path := []vec3{ref, p}
	if ref.dot(p) < -0.999 {
		mid := ref.cross(vec3{0, 0, 1})
		if mid.norm() < 1e-6 {
			mid = ref.cross(vec3{1, 0, 0})
		}
		path = []vec3{ref, mid.unit(), p}
	}
	for k := 0; k+1 < len(path); k++ {
		for i := 0; i+1 < len(vs); i++ {
			if crosses(path[k], path[k+1], vs[i], vs[i+1]) {
				inside = !inside
			}
		}
	}
	return inside
}

// polygonContains: inside the outer ring and inside (left of) every hole ring too.
func polygonContains(rings [][]lonLat, p vec3) bool {
	for _, r := range rings {
		if !ringContains(r, p) {
			return false
		}
	}
	return true
}

func (g geometry) contains(p vec3) bool {
	for _, rings := range g.polys {
		if polygonContains(rings, p) {
			return true
		}
	}
	return false
}

// vertices and edges of a geometry, as unit vectors.
func (g geometry) vertices() []vec3 {
	var out []vec3
	for _, p := range g.pos {
		out = append(out, p.vec())
	}
	for _, rings := range g.polys {
		for _, r := range rings {
			for _, p := range r {
				out = append(out, p.vec())
			}
		}
	}
	return out
}

func (g geometry) edges() [][2]vec3 {
	var out [][2]vec3
	add := func(ps []lonLat) {
		for i := 0; i+1 < len(ps); i++ {
			out = append(out, [2]vec3{ps[i].vec(), ps[i+1].vec()})
		}
	}
	if g.typ == "LineString" {
		add(g.pos)
	}
	for _, rings := range g.polys {
		for _, r := range rings {
			add(r)
		}
	}
	return out
}

func edgesCross(a, b geometry) bool {
	eb := b.edges()
	for _, e := range a.edges() {
		for _, f := range eb {
			if crosses(e[0], e[1], f[0], f[1]) {
				return true
			}
		}
	}
	return false
}

// onGeometry reports whether p lies on a vertex or an edge of g (within about a millimetre).
func onGeometry(g geometry, p vec3) bool {
	const tol = 1e-10 // radians
	for _, v := range g.vertices() {
		if angleBetween(v, p) < tol {
			return true
		}
	}
	for _, e := range g.edges() {
		if q := closestOnArc(e[0], e[1], p); angleBetween(q, p) < tol {
			return true
		}
	}
	return false
}

func angleBetween(a, b vec3) float64 { return math.Atan2(a.cross(b).norm(), a.dot(b)) }

// closestOnArc is the point of the arc a-b nearest to p.
func closestOnArc(a, b, p vec3) vec3 {
	n := a.cross(b)
	if n.norm() < 1e-15 {
		return a
	}
	n = n.unit()
	q := p.plus(n.scale(-p.dot(n))) // projection onto the arc's great circle
	if q.norm() < 1e-15 {
		return a
	}
	q = q.unit()
	// q is on the arc when it lies between a and b.
	if a.cross(q).dot(n) >= 0 && q.cross(b).dot(n) >= 0 {
		return q
	}
	if angleBetween(a, p) <= angleBetween(b, p) {
		return a
	}
	return b
}

func geoArgs(args []value.Value) (a, b geometry, ok bool) {
	a, r1 := parseGeo(args[0])
	b, r2 := parseGeo(args[1])
	return a, b, r1 == "" && r2 == ""
}

// ST_WITHIN(a, b): whether a lies inside b. Only an areal b has an inside; a point is also
// within an equal point or a line it lies on.
func stWithin(args []value.Value) value.Value {
	a, b, ok := geoArgs(args)
	if !ok {
		return undef
	}
	if !b.areal() {
		if a.typ != "Point" {
			return boolV(false)
		}
		return boolV(onGeometry(b, a.pos[0].vec()))
	}
	for _, v := range a.vertices() {
		if !b.contains(v) {
			return boolV(false)
		}
	}
	return boolV(!edgesCross(a, b))
}

// ST_INTERSECTS(a, b): whether the two share any point.
func stIntersects(args []value.Value) value.Value {
	a, b, ok := geoArgs(args)
	if !ok {
		return undef
	}
	return boolV(intersects(a, b))
}

func intersects(a, b geometry) bool {
	if edgesCross(a, b) {
		return true
	}
	for _, pair := range [2][2]geometry{{a, b}, {b, a}} {
		x, y := pair[0], pair[1]
		for _, v := range x.vertices() {
			if y.areal() && y.contains(v) || onGeometry(y, v) {
				return true
			}
		}
	}
	return false
}

// ST_DISTANCE(a, b) in meters: along the great ellipse between two points; between other
// geometries, 0 when they intersect, else the distance between their nearest points.
func stDistance(args []value.Value) value.Value {
	a, b, ok := geoArgs(args)
	if !ok {
		return undef
	}
	if a.typ == "Point" && b.typ == "Point" {
		return numV(greatEllipseDistance(a.pos[0], b.pos[0]))
	}
	if intersects(a, b) {
		return numV(0)
	}
	best := math.Inf(1)
	var p1, p2 vec3
	for _, pair := range [2][2]geometry{{a, b}, {b, a}} {
		x, y := pair[0], pair[1]
		ey := y.edges()
		for _, v := range x.vertices() {
			cands := y.vertices()
			for _, e := range ey {
				cands = append(cands, closestOnArc(e[0], e[1], v))
			}
			for _, q := range cands {
				if d := angleBetween(v, q); d < best {
					best, p1, p2 = d, v, q
				}
			}
		}
	}
	if math.IsInf(best, 1) {
		return undef
	}
	return numV(greatEllipseDistance(lonLatOf(p1), lonLatOf(p2)))
}

// ecef is a geodetic position on the WGS-84 ellipsoid in earth-centred coordinates.
func ecef(p lonLat) vec3 {
	const e2 = wgsF * (2 - wgsF)
	lat, lon := toRad(p.lat), toRad(p.lon)
	s := math.Sin(lat)
	n := wgsA / math.Sqrt(1-e2*s*s)
	return vec3{n * math.Cos(lat) * math.Cos(lon), n * math.Cos(lat) * math.Sin(lon), n * (1 - e2) * s}
}

// greatEllipseDistance is the length of the shorter arc, between the two points, of the
// ellipse cut from the ellipsoid by the plane through them and the earth's centre.
func greatEllipseDistance(p, q lonLat) float64 {
	if p == q {
		return 0
	}
	u, v := ecef(p), ecef(q)
	n := u.cross(v)
	if n.norm() < 1e-9*wgsA*wgsA {
		// Equal or antipodal points: any plane through both will do; take the meridian's.
		n = vec3{0, 0, 1}.cross(u)
		if n.norm() == 0 {
			n = vec3{0, 1, 0}
		}
	}
	n = n.unit()
	// e1 is the ellipse's major axis, in the equatorial plane; e2 its minor axis.
	e1 := vec3{0, 0, 1}.cross(n)
	if e1.norm() < 1e-15 {
		e1 = u // the plane is the equator
	}
	e1 = e1.unit()
	e2 := n.cross(e1).unit()
	z := e2[2]
	minor := 1 / math.Sqrt((1-z*z)/(wgsA*wgsA)+z*z/(wgsB*wgsB))
	t1 := math.Atan2(u.dot(e2)/minor, u.dot(e1)/wgsA)
	t2 := math.Atan2(v.dot(e2)/minor, v.dot(e1)/wgsA)
	dt := math.Remainder(t2-t1, 2*math.Pi)
	return math.Abs(ellipseArc(wgsA, minor, t1, t1+dt))
}

// ellipseArc integrates the arc length of x = a·cos t, y = b·sin t from t0 to t1, by
// composite Gauss-Legendre quadrature (the integrand is smooth and nearly constant).
func ellipseArc(a, b, t0, t1 float64) float64 {
	f := func(t float64) float64 {
		s, c := math.Sincos(t)
		return math.Sqrt(a*a*s*s + b*b*c*c)
	}
	pieces := int(math.Ceil(math.Abs(t1-t0)/0.25)) + 1
	h := (t1 - t0) / float64(pieces)
	sum := 0.0
	for k := 0; k < pieces; k++ {
		mid := t0 + (float64(k)+0.5)*h
		for i, x := range glNodes {
			sum += glWeights[i] * f(mid+x*h/2)
		}
	}
	return sum * h / 2
}

// glNodes and glWeights are the 8-point Gauss-Legendre rule on [-1, 1], computed at start-up
// by Newton's method on the Legendre polynomial.
var glNodes, glWeights = gaussLegendre(8)

func gaussLegendre(n int) (nodes, weights []float64) {
	for i := 1; i <= n; i++ {
		x := math.Cos(math.Pi * (float64(i) - 0.25) / (float64(n) + 0.5))
		var dp float64
		for range 100 {
			p0, p1 := 1.0, x
			for k := 2; k <= n; k++ {
				p0, p1 = p1, ((2*float64(k)-1)*x*p1-(float64(k)-1)*p0)/float64(k)
			}
			dp = float64(n) * (x*p1 - p0) / (x*x - 1)
			dx := p1 / dp
			x -= dx
			if math.Abs(dx) < 1e-16 {
				break
			}
		}
		nodes = append(nodes, x)
		weights = append(weights, 2/((1-x*x)*dp*dp))
	}
	return nodes, weights
}

// ST_AREA in square meters: Polygons and MultiPolygons on the authalic sphere; points and
// lines have no area.
func stArea(args []value.Value) value.Value {
	g, reason := parseGeo(args[0])
	if reason != "" {
		return undef
	}
	total := 0.0
	for _, rings := range g.polys {
		// Each ring's signed area counts its left side: the outer ring adds its inside, a
		// (clockwise) hole subtracts; a clockwise outer ring stands for the rest of the earth.
		a := 0.0
		for i, r := range rings {
			s := ringExcess(r)
			if i == 0 && s < 0 {
				s += 4 * math.Pi
			}
			a += s
		}
		total += a
	}
	return numV(total * authalicRadius * authalicRadius)
}

var authalicRadius, authalicQp = func() (float64, float64) {
	const e2 = wgsF * (2 - wgsF)
	e := math.Sqrt(e2)
	qp := 1 + (1-e2)/(2*e)*math.Log((1+e)/(1-e))
	return wgsA * math.Sqrt(qp/2), qp
}()

// authalicLat maps a geodetic latitude to the sphere of equal area.
func authalicLat(lat float64) float64 {
	const e2 = wgsF * (2 - wgsF)
	e := math.Sqrt(e2)
	s := math.Sin(lat)
	q := (1 - e2) * (s/(1-e2*s*s) - 1/(2*e)*math.Log((1-e*s)/(1+e*s)))
	return math.Asin(math.Max(-1, math.Min(1, q/authalicQp)))
}

// ringExcess is the signed spherical area (in steradians) to the left of a ring with
// great-circle edges, summed over the triangles each edge makes with the pole.
func ringExcess(ring []lonLat) float64 {
	s := 0.0
	for i := 0; i+1 < len(ring); i++ {
		l1, l2 := toRad(ring[i].lon), toRad(ring[i+1].lon)
		p1, p2 := authalicLat(toRad(ring[i].lat)), authalicLat(toRad(ring[i+1].lat))
		dl := math.Remainder(l2-l1, 2*math.Pi)
		// Each term is the signed area between the edge and the north pole, positive for a
		// westward edge; its negation counts a counter-clockwise ring's inside as positive.
		s -= 2 * math.Atan2(math.Tan(dl/2)*math.Sin((p1+p2)/2), math.Cos((p1-p2)/2))
	}
	return s
}
