package e2e

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// The explorer drives a real server from headless Chromium: it refuses access without the key
// and with a wrong one, signs in, creates a database and a container, imports items, runs a
// query, changes the throughput, and watches the partition map gain partitions as the
// container splits. The key never shows in a URL, a request or the server's log.
//
// Chromium comes from Debian's chromium package (.ci/run installs it); without it the test is
// skipped, or fails when CI is set. With PARTITA_SCREENSHOTS=dir it saves the main screens
// there as PNGs (docs/images holds the ones docs/explorer.md shows).
func TestExplorer(t *testing.T) {
	browser := findChromium(t)
	// Partitions split past 512 KiB, so that a few hundred KiB of writes split one; the
	// container's 400 RU/s throttle the import, which retries.
	s := startServer(t, false, "--partition-max-bytes", "524288", "--log-level", "debug")
	shots := os.Getenv("PARTITA_SCREENSHOTS")

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(browser), chromedp.WindowSize(1280, 800))
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox) // Chromium refuses to run its sandbox as root
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	bctx, cancelBrowser := chromedp.NewContext(actx, chromedp.WithErrorf(t.Logf))
	defer cancelBrowser()
	ctx, cancel := context.WithTimeout(bctx, 4*time.Minute)
	defer cancel()

	// Every request the page makes, to check that the key is in none of them.
	var reqMu sync.Mutex
	var requests []*network.Request
	chromedp.ListenTarget(ctx, func(ev any) {
		if e, ok := ev.(*network.EventRequestWillBeSent); ok {
			reqMu.Lock()
			requests = append(requests, e.Request)
			reqMu.Unlock()
		}
	})
	// Uncaught script errors on the page fail the test.
	var jsErrMu sync.Mutex
	var jsErrors []string
	chromedp.ListenTarget(ctx, func(ev any) {
		if e, ok := ev.(*runtime.EventExceptionThrown); ok {
			jsErrMu.Lock()
			jsErrors = append(jsErrors, e.ExceptionDetails.Error())
			jsErrMu.Unlock()
		}
	})
	defer func() {
		jsErrMu.Lock()
		defer jsErrMu.Unlock()
		if len(jsErrors) > 0 {
			t.Errorf("script errors on the page: %s", strings.Join(jsErrors, "; "))
		}
	}()
	run := func(what string, actions ...chromedp.Action) {
		t.Helper()
		if err := chromedp.Run(ctx, actions...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	shot := func(name string) {
		t.Helper()
		if shots == "" {
			return
		}
		var png []byte
		run("screenshot "+name, chromedp.Sleep(300*time.Millisecond), chromedp.CaptureScreenshot(&png))
		if err := os.WriteFile(filepath.Join(shots, "explorer-"+name+".png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	text := func(sel string) string {
		t.Helper()
		// Read in one evaluation: the page redraws parts of itself, and a node found by one
		// protocol call may be gone by the next.
		var s string
		run("read "+sel, chromedp.Evaluate(fmt.Sprintf(`(document.querySelector(%q) || {}).innerText || ''`, sel), &s))
		return s
	}
	count := func(sel string) int {
		t.Helper()
		var n int
		run("count "+sel, chromedp.Evaluate(fmt.Sprintf(`document.querySelectorAll(%q).length`, sel), &n))
		return n
	}
	// waitCount waits until sel matches at least n elements (the partition map polls).
	waitCount := func(sel string, n int) int {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second)
		for {
			if got := count(sel); got >= n {
				return got
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s never matched %d elements (last %d)", sel, n, count(sel))
			}
			time.Sleep(200 * time.Millisecond)
		}
	}

	// The shell loads without a key, but shows no data: it asks for the key, and the API
	// refuses an unsigned request.
	// Content-Security-Policy violations are collected by the page (a listener installed
	// before its own scripts run) and checked at the end: the explorer must not need any
	// exception to its policy.
	watchCSP := chromedp.ActionFunc(func(ctx context.Context) error {
		_, err := page.AddScriptToEvaluateOnNewDocument(`window.__csp = [];
			document.addEventListener('securitypolicyviolation', e => window.__csp.push(e.violatedDirective + ' ' + e.blockedURI));`).Do(ctx)
		return err
	})
	run("open", network.Enable(), watchCSP, chromedp.EmulateViewport(1280, 800), chromedp.Navigate(s.Endpoint+"_explorer#/db/shop"), chromedp.WaitVisible("#key", chromedp.ByID))
	var loc string
	run("location", chromedp.Location(&loc))
	if !strings.Contains(loc, "/_explorer/") {
		t.Fatalf("/_explorer did not redirect to /_explorer/: %s", loc)
	}
	var unsigned int
	run("unsigned fetch", chromedp.Evaluate(`fetch('/dbs').then(r => r.status)`, &unsigned, awaitPromise))
	if unsigned != 401 {
		t.Fatalf("an unsigned request from the page answered %d", unsigned)
	}
	shot("login")

	// A wrong key, and a key that is not base64, are refused with a clear message.
	wrong := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("not the key ", 6)))
	run("wrong key", chromedp.SendKeys("#key", wrong, chromedp.ByID), chromedp.Click("#login", chromedp.ByID),
		chromedp.WaitVisible("#login-error .error", chromedp.ByQuery))
	if msg := text("#login-error"); !strings.Contains(msg, "refused this key") {
		t.Fatalf("a wrong key says %q", msg)
	}
	run("bad key", chromedp.SetValue("#key", "not base64!", chromedp.ByID), chromedp.Click("#login", chromedp.ByID),
		chromedp.WaitVisible("#login-error .error", chromedp.ByQuery))
	if msg := text("#login-error"); !strings.Contains(msg, "not valid base64") {
		t.Fatalf("a key that is not base64 says %q", msg)
	}
	if n := count("#db-list, #new-db"); n != 0 {
		t.Fatal("data shown without a valid key")
	}

	// Sign in; the route asked for (a database that does not exist yet) shows its error.
	run("sign in", chromedp.SetValue("#key", emulatorKey, chromedp.ByID),
		chromedp.Click("#login", chromedp.ByID), chromedp.Navigate(s.Endpoint+"_explorer/#/"), chromedp.WaitVisible("#new-db-id", chromedp.ByID))

	// A database and a container keyed by /customer with 400 RU/s.
	run("create database", chromedp.SendKeys("#new-db-id", "shop", chromedp.ByID), chromedp.Click("#new-db-submit", chromedp.ByID),
		chromedp.WaitVisible("#new-c-id", chromedp.ByID))
	run("create container", chromedp.SendKeys("#new-c-id", "orders", chromedp.ByID), chromedp.SetValue("#new-c-pk", "/customer", chromedp.ByID),
		chromedp.Click("#new-c-submit", chromedp.ByID), chromedp.WaitVisible("#import-text", chromedp.ByID))

	// Import 300 orders of 30 customers as JSON lines; at 400 RU/s some writes are throttled
	// and retried.
	const orders, customers = 300, 30
	var lines []string
	wantOver := 0
	for i := range orders {
		total := (i * 37) % 200
		if total > 150 {
			wantOver++
		}
		b, _ := json.Marshal(map[string]any{"id": fmt.Sprintf("o%03d", i), "customer": fmt.Sprintf("c%02d", i%customers),
			"total": total, "items": i%5 + 1, "status": []string{"open", "paid", "shipped"}[i%3]})
		lines = append(lines, string(b))
	}
	run("import", chromedp.SetValue("#import-text", strings.Join(lines, "\n"), chromedp.ByID), chromedp.Click("#import-run", chromedp.ByID),
		chromedp.WaitVisible("#import-done", chromedp.ByID))
	if msg := text("#import-done"); !strings.Contains(msg, fmt.Sprintf("Imported %d items", orders)) || strings.Contains(msg, "failed") {
		t.Fatalf("import says %q", msg)
	}
	waitCount("#items-list tbody tr", 25) // the first page of the list

	// Edit an item as JSON, and create one.
	run("edit item", chromedp.Click(`#items-list a[href="#"]`, chromedp.ByQuery), chromedp.WaitVisible("#item-json", chromedp.ByID))
	var edited map[string]any
	var shown string
	run("item json", chromedp.Value("#item-json", &shown, chromedp.ByID))
	if err := json.Unmarshal([]byte(shown), &edited); err != nil || edited["id"] == nil || edited["_rid"] != nil {
		t.Fatalf("the editor shows %q", shown)
	}
	edited["note"] = "edited in the explorer"
	b, _ := json.Marshal(edited)
	run("save item", chromedp.SetValue("#item-json", string(b), chromedp.ByID), chromedp.Click("#item-save", chromedp.ByID),
		chromedp.WaitVisible("#item-editor .ok", chromedp.ByQuery))
	rc := rawClient{s: s, key: emulatorKey, now: time.Now}
	id, cust := edited["id"].(string), edited["customer"].(string)
	if code, got := readRetrying(t, rc, "/dbs/shop/colls/orders/docs/"+id, fmt.Sprintf("[%q]", cust)); code != 200 || !strings.Contains(string(got), "edited in the explorer") {
		t.Fatalf("after the edit the item reads %d %s", code, got)
	}
	run("new item", chromedp.Click("#item-new", chromedp.ByID), chromedp.WaitVisible("#item-json", chromedp.ByID),
		chromedp.SetValue("#item-json", `{"id": "n1", "customer": "c99", "total": 5}`, chromedp.ByID), chromedp.Click("#item-save", chromedp.ByID),
		chromedp.WaitVisible("#item-editor .ok", chromedp.ByQuery))
	if code, got := readRetrying(t, rc, "/dbs/shop/colls/orders/docs/n1", `["c99"]`); code != 200 {
		t.Fatalf("the new item reads %d %s", code, got)
	}
	// A body that is not an item is refused in the page, and nothing is written.
	run("bad item", chromedp.Click("#item-new", chromedp.ByID), chromedp.WaitVisible("#item-json", chromedp.ByID),
		chromedp.SetValue("#item-json", `{"customer": "c98"}`, chromedp.ByID), chromedp.Click("#item-save", chromedp.ByID),
		chromedp.WaitVisible("#item-editor .error", chromedp.ByQuery))
	if msg := text("#item-editor .error"); !strings.Contains(msg, `"id"`) {
		t.Fatalf("an item without an id says %q", msg)
	}
	run("reopen", chromedp.Click(`#items-list a[href="#"]`, chromedp.ByQuery), chromedp.WaitVisible("#item-json", chromedp.ByID))
	shot("items")

	// A cross-partition query with ORDER BY, in pages of 50: its results, in order, its
	// charge and metrics, and the next page through its continuation.
	run("query", chromedp.Click("#tab-query", chromedp.ByID), chromedp.WaitVisible("#query-text", chromedp.ByID),
		chromedp.SetValue("#query-text", "SELECT c.id, c.customer, c.total, c.status FROM c WHERE c.total > 150 ORDER BY c.total DESC", chromedp.ByID),
		chromedp.SetValue("#query-page-size", "50", chromedp.ByID),
		chromedp.Click("#query-run", chromedp.ByID), chromedp.WaitVisible("#query-table", chromedp.ByID))
	if wantOver <= 50 || wantOver > 100 {
		t.Fatalf("the data set has %d matches; the test wants two pages of 50", wantOver)
	}
	if n := count("#query-table tbody tr"); n != 50 {
		t.Fatalf("the query's first page shows %d rows, want 50", n)
	}
	charge := text("#query-charge")
	if v, err := strconv.ParseFloat(strings.Fields(charge)[0], 64); err != nil || v <= 0 {
		t.Fatalf("the query's charge reads %q", charge)
	}
	if m := text("#query-metrics"); !strings.Contains(m, "Items loaded") {
		t.Fatalf("query metrics read %q", m)
	}
	if first := text("#query-table tbody tr:first-child td:nth-child(3)"); first != "199" {
		t.Fatalf("the highest total is shown as %q, want 199", first)
	}
	shot("query")
	// The next page is asked for with the partition's budget spent: the explorer retries the
	// throttled request after the time the server asks, as the SDKs do.
	spendBudget(t, s)
	run("next page", chromedp.Click("#query-more", chromedp.ByID))
	waitText := func(sel, want string) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for !strings.Contains(text(sel), want) {
			if time.Now().After(deadline) {
				t.Fatalf("%s reads %q, never %q (page errors: %q)", sel, text(sel), want, text(".note.error"))
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	waitText("#query-stats", "results in 2 pages · no more pages")
	if n := count("#query-table tbody tr"); n != wantOver-50 {
		t.Fatalf("the query's second page shows %d rows, want %d", n, wantOver-50)
	}

	// The partition map: one partition, with the import's consumption in its history.
	run("map", chromedp.Click("#tab-partitions", chromedp.ByID), chromedp.WaitVisible("#partition-bar .range", chromedp.ByQuery))
	if n := count("#partition-bar .range"); n != 1 {
		t.Fatalf("a new container shows %d partitions", n)
	}
	waitCount("#timeline .series polyline", 1)
	if sum := text("#map-summary"); !strings.Contains(sum, "301 items") {
		t.Fatalf("the map's summary reads %q", sum)
	}
	// Logical partitions are named by their key values (the customers), their EPKs beside.
	if tbl := text("#partition-table"); !regexp.MustCompile(`"c\d\d" [0-9A-F]{8}`).MatchString(tbl) {
		t.Fatalf("the partitions table names no logical partition by its key value:\n%s", tbl)
	}

	// For the screenshots, a minute of load that rises and falls past the budget, so that
	// the timeline has something to show.
	if shots != "" {
		load(t, s, time.Minute)
	}

	// While the map is open, write past the split size: the map gains a partition as the
	// container splits, without a reload, and names the split.
	writeLarge(t, s, 70, 8<<10)
	waitCount("#partition-bar .range", 2)
	waitCount("#map-events li:not(.muted)", 1)
	if ev := text("#map-events"); !strings.Contains(ev, "split from 0") {
		t.Fatalf("the splits list reads %q", ev)
	}
	// The timeline keeps the parent's series, ended at the split, beside its children's.
	waitCount("#timeline .series.retired", 1)
	waitCount("#timeline .series:not(.retired)", 1)
	if shots != "" {
		load(t, s, 30*time.Second)
	}
	shot("partitions")
	if shots != "" {
		run("timeline", chromedp.ScrollIntoView("#timeline-card", chromedp.ByID))
		shot("timeline")
	}

	// Raising the throughput to 30,000 RU/s in the settings splits the container into at
	// least three partitions (10,000 RU/s each at most), which the map then shows.
	run("settings", chromedp.Click("#tab-settings", chromedp.ByID), chromedp.WaitVisible("#settings-ru", chromedp.ByID))
	if pk := text("#settings-pk"); pk != "/customer" {
		t.Fatalf("settings show the partition key %q", pk)
	}
	run("raise throughput", chromedp.SetValue("#settings-ru", "30000", chromedp.ByID), chromedp.Click("#settings-throughput-submit", chromedp.ByID),
		chromedp.WaitVisible("#settings-throughput-result .ok", chromedp.ByQuery))
	if cur := text("#settings-ru-current"); cur != "30,000 RU/s" {
		t.Fatalf("the throughput reads %q after the change", cur)
	}
	shot("settings")
	run("map again", chromedp.Click("#tab-partitions", chromedp.ByID), chromedp.WaitVisible("#partition-bar .range", chromedp.ByQuery))
	if n := waitCount("#partition-bar .range", 3); n < 3 {
		t.Fatalf("%d partitions at 30,000 RU/s", n)
	}
	// The ranges are drawn by their shares of the hashes, which the throughput's splits
	// divide evenly: none takes most of the bar (by the EPKs' bytes, the last would take
	// four fifths of it).
	var widths []float64
	run("range widths", chromedp.Evaluate(`[...document.querySelectorAll('#partition-bar .range rect')].map(r => +r.getAttribute('width'))`, &widths))
	for _, w := range widths {
		if w > 600 {
			t.Fatalf("a range takes %.0f of the bar's 1000: %v", w, widths)
		}
	}

	// The advice view shows the advisor's answer, or the server's reason when there is none.
	run("advice", chromedp.Click("#tab-advice", chromedp.ByID))
	waitCount("#advice-candidates, #advice .error", 1)
	if count("#advice-candidates") == 1 {
		if n := count("#advice-candidates tbody tr"); n == 0 {
			t.Fatal("the advice lists no candidates")
		}
		shot("advice")
	} else if msg := text("#advice"); !strings.Contains(msg, "No advice") {
		t.Fatalf("the advice view reads %q", msg)
	}

	// The database's containers.
	run("containers", chromedp.Navigate(s.Endpoint+"_explorer/#/db/shop"), chromedp.WaitVisible("#container-list", chromedp.ByID))
	if list := text("#container-list"); !strings.Contains(list, "orders") || !strings.Contains(list, "/customer") {
		t.Fatalf("the container list reads %q", list)
	}
	shot("containers")

	// The key is in no URL the page requested or showed, in no request header but as a
	// signature, and not in the server's log.
	run("location", chromedp.Location(&loc))
	escaped := url.QueryEscape(emulatorKey)
	if strings.Contains(loc, emulatorKey) || strings.Contains(loc, escaped) {
		t.Fatalf("the key is in the URL %s", loc)
	}
	reqMu.Lock()
	for _, r := range requests {
		if strings.Contains(r.URL, emulatorKey) || strings.Contains(r.URL, escaped) || strings.Contains(r.URL, url.PathEscape(emulatorKey)) {
			t.Fatalf("the key is in the request URL %s", r.URL)
		}
		for k, v := range r.Headers {
			if s := fmt.Sprint(v); strings.Contains(s, emulatorKey) || strings.Contains(s, escaped) {
				t.Fatalf("the key is in the request header %s", k)
			}
		}
	}
	signed := len(requests)
	reqMu.Unlock()
	if signed < 20 {
		t.Fatalf("only %d requests seen; the listener missed them", signed)
	}
	if logs := s.Logs(); strings.Contains(logs, emulatorKey) || strings.Contains(logs, escaped) {
		t.Fatal("the key is in the server's log")
	}

	var violations []string
	run("csp", chromedp.Evaluate(`window.__csp`, &violations))
	if len(violations) > 0 {
		t.Fatalf("the page broke its content security policy: %v", violations)
	}

	// Signing out forgets the key: the page asks for it again.
	run("sign out", chromedp.Click("#logout", chromedp.ByID), chromedp.WaitVisible("#key", chromedp.ByID))
	var stored bool
	run("storage", chromedp.Evaluate(`sessionStorage.length > 0`, &stored))
	if stored {
		t.Fatal("the key is still stored after signing out")
	}
}

// awaitPromise makes chromedp.Evaluate wait for the promise the expression returns.
func awaitPromise(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) }

// writeLarge writes n items of size bytes each, over many logical partitions, retrying
// throttled writes after the time the server asks.
func writeLarge(t *testing.T, s *server, n, size int) {
	t.Helper()
	rc := rawClient{s: s, key: emulatorKey, now: time.Now}
	pad := strings.Repeat("x", size)
	for i := range n {
		pk := fmt.Sprintf("big%03d", i)
		body, _ := json.Marshal(map[string]any{"id": fmt.Sprint("big", i), "customer": pk, "total": 0, "pad": pad})
		for attempt := 0; ; attempt++ {
			code, hdr, b := rc.do(t, "POST", "/dbs/shop/colls/orders/docs", body, map[string]string{"x-ms-documentdb-partitionkey": fmt.Sprintf("[%q]", pk)})
			if code == 201 {
				break
			}
			if code != 429 || attempt > 50 {
				t.Fatalf("writing item %d: %d %s", i, code, b)
			}
			ms, _ := strconv.Atoi(hdr.Get("x-ms-retry-after-ms"))
			time.Sleep(time.Duration(max(ms, 10)) * time.Millisecond)
		}
	}
}

// readRetrying reads an item as a client does: a 429 (the explorer's own requests may have
// spent the second's budget) is retried after the time the server asks for, a few times.
func readRetrying(t *testing.T, rc rawClient, path, key string) (int, []byte) {
	t.Helper()
	for attempt := 0; ; attempt++ {
		code, hdr, b := rc.do(t, "GET", path, nil, map[string]string{"x-ms-documentdb-partitionkey": key})
		if code != 429 || attempt == 20 {
			return code, b
		}
		ms, _ := strconv.Atoi(hdr.Get("x-ms-retry-after-ms"))
		time.Sleep(time.Duration(max(ms, 10)) * time.Millisecond)
	}
}

// spendBudget upserts one small order until the container's throughput for this second is
// spent, which the first 429 shows.
func spendBudget(t *testing.T, s *server) {
	t.Helper()
	rc := rawClient{s: s, key: emulatorKey, now: time.Now}
	for range 1000 {
		code, _, b := rc.do(t, "POST", "/dbs/shop/colls/orders/docs", []byte(`{"id":"n1","customer":"c99","total":5}`),
			map[string]string{"x-ms-documentdb-partitionkey": `["c99"]`, "x-ms-documentdb-is-upsert": "true"})
		switch code {
		case 429:
			return
		case 200, 201:
		default:
			t.Fatalf("spending the budget: %d %s", code, b)
		}
	}
	t.Fatal("1,000 upserts in a row were not throttled")
}

// load upserts small orders for about d, at a rate that rises and falls every 20 seconds
// between about a sixth and one and a half times the container's 400 RU/s; throttled writes
// are dropped.
func load(t *testing.T, s *server, d time.Duration) {
	t.Helper()
	rc := rawClient{s: s, key: emulatorKey, now: time.Now}
	start := time.Now()
	for i := 0; time.Since(start) < d; i++ {
		phase := math.Sin(2 * math.Pi * time.Since(start).Seconds() / 20)
		for range 1 + int(4*(1+phase)) {
			pk := fmt.Sprintf("c%02d", i%7) // a few hot customers
			body := fmt.Sprintf(`{"id":"load%d","customer":%q,"total":1}`, i%50, pk)
			if code, ok := rc.tryDo("POST", "/dbs/shop/colls/orders/docs", []byte(body), map[string]string{
				"x-ms-documentdb-partitionkey": fmt.Sprintf("[%q]", pk), "x-ms-documentdb-is-upsert": "true"}); !ok || code >= 500 {
				t.Fatalf("load: %d", code)
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// findChromium returns the path of a Chromium or Chrome binary, or skips the test (fails it
// when CI is set: CI installs Chromium).
func findChromium(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("PARTITA_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	msg := "no Chromium found (install Debian's chromium package, or set PARTITA_CHROMIUM to a Chrome binary)"
	if os.Getenv("CI") != "" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}
