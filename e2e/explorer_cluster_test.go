package e2e

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/partita-db/partita/internal/controlplane/controlplanetest"
	"github.com/partita-db/partita/internal/masterkey"
)

// The explorer's cluster view on one node of a real cluster (three replicas per partition):
// it lists the three nodes, live, with their addresses and what each holds, and the
// container's partitions with their leaders, all as GET /_partita/cluster gives them; its
// drain button is refused on three nodes, with the server's reason shown; a fourth node
// joins and takes a share of the replicas; the view drains a node, which it shows as
// "live, draining" and then holding nothing, and its cancel button has replicas move back.
func TestExplorerCluster(t *testing.T) {
	browser := findChromium(t)
	nodes := startClusterOf(t, 3)
	createDBAndContainer(t, nodes[0].sdk(t), nodes[0].sdk(t), 12000) // two partitions
	// Some items, so that a node that joins or comes back receives data with its replicas.
	c, err := nodes[0].sdk(t).NewContainer("db", "c")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 40 {
		pk := fmt.Sprint("k", i%7)
		retrying(t, "create an item", func() error {
			_, err := c.UpsertItem(ctx(t), azcosmos.NewPartitionKeyString(pk), fmt.Appendf(nil, `{"id":"i%d","pk":%q}`, i, pk), nil)
			return err
		})
	}
	via := nodes[1] // the node whose explorer the test opens
	b := openExplorer(t, browser)

	b.run("sign in", chromedp.Navigate(via.Endpoint+"_explorer/#/"), chromedp.WaitVisible("#key", chromedp.ByID),
		chromedp.SetValue("#key", emulatorKey, chromedp.ByID), chromedp.Click("#login", chromedp.ByID),
		chromedp.WaitVisible("#new-db-id", chromedp.ByID))
	b.run("open the cluster view", chromedp.Click("#nav-cluster", chromedp.ByID), chromedp.WaitVisible("#cluster-nodes tbody tr", chromedp.ByQuery))

	// The page against the API, until they agree (both change as leaderships spread).
	agree := func(what string, want func(st explorerClusterStatus, v clusterViewRows) error) clusterViewRows {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			v := b.clusterRows()
			st := clusterStatusOf(t, via.server)
			err := v.matches(st)
			if err == nil {
				err = want(st, v)
			}
			if err == nil {
				return v
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: %v\nthe page shows %+v", what, err, v)
			}
			time.Sleep(250 * time.Millisecond)
		}
	}
	row := func(v clusterViewRows, addr string) clusterViewNode {
		i := slices.IndexFunc(v.Nodes, func(n clusterViewNode) bool { return n.Addr == addr })
		if i < 0 {
			return clusterViewNode{}
		}
		return v.Nodes[i]
	}
	holdsAll := func(addrs ...string) func(explorerClusterStatus, clusterViewRows) error {
		return func(st explorerClusterStatus, v clusterViewRows) error {
			for _, a := range addrs {
				if n := row(v, a); n.Status != "live" || n.Replicas != "2" || n.Learners != "0" {
					return fmt.Errorf("node %s is shown as %+v, want live with 2 replicas, none a learner", a, n)
				}
			}
			return nil
		}
	}
	// holdsSome: the node is live and holds a replica, and the partitions have six in all.
	holdsSome := func(addr string) func(explorerClusterStatus, clusterViewRows) error {
		return func(st explorerClusterStatus, v clusterViewRows) error {
			total := 0
			for _, n := range v.Nodes {
				var k int
				fmt.Sscan(n.Replicas, &k)
				total += k
			}
			if n := row(v, addr); n.Status != "live" || n.Replicas == "0" || n.Learners != "0" || total != 6 {
				return fmt.Errorf("node %s is shown as %+v, %d replicas in all; want it live with a replica, six in all", addr, n, total)
			}
			return nil
		}
	}

	v := agree("three live nodes", func(st explorerClusterStatus, v clusterViewRows) error {
		if len(st.Nodes) != 3 || len(st.Replicas) != 2 {
			return fmt.Errorf("the API lists %d nodes and %d replicas, want 3 and 2", len(st.Nodes), len(st.Replicas))
		}
		for _, p := range v.Partitions {
			if p.Leader == "" || strings.HasPrefix(p.Leader, "none") || p.Range == "–" {
				return fmt.Errorf("partition %s is shown without a leader or a range: %+v", p.Key, p)
			}
		}
		return holdsAll(nodes[0].args[1], nodes[1].args[1], nodes[2].args[1])(st, v)
	})
	if !strings.Contains(row(v, via.args[1]).Node, "(this node)") {
		t.Fatalf("the page's own node is not marked: %+v", v.Nodes)
	}
	if got := []string{v.Partitions[0].Range, v.Partitions[1].Range}; !strings.HasPrefix(got[0], `[""`) || !strings.HasSuffix(got[1], "FF)") {
		t.Fatalf("the two partitions' ranges read %q", got)
	}

	// A drain of one of three nodes is refused, and the page says why.
	target := nodes[2].args[1]
	drainButton := fmt.Sprintf(`#cluster-nodes tr[data-addr=%q] button`, target)
	b.run("drain one of three", b.click(drainButton+".drain"), chromedp.WaitVisible("#cluster-result .note", chromedp.ByQuery))
	if msg := b.text("#cluster-result"); !strings.Contains(msg, "would leave 2 node(s)") {
		t.Fatalf("a refused drain reads %q", msg)
	}
	if d := b.dialogs(); len(d) != 1 || !strings.Contains(d[0], "Drain node "+target) {
		t.Fatalf("the confirmations asked were %q", d)
	}

	// A fourth node joins; the view shows it receive a share of the replicas.
	fourth := &clusterNode{dir: t.TempDir(), args: []string{"--cluster-addr", controlplanetest.FreeAddr(t), "--join", nodes[0].args[3], "--log-level", "warn"}}
	fourth.restart(t)
	agree("the fourth node holding a replica", func(st explorerClusterStatus, v clusterViewRows) error {
		if len(st.Nodes) != 4 {
			return fmt.Errorf("the API lists %d nodes", len(st.Nodes))
		}
		return holdsSome(fourth.args[1])(st, v)
	})

	// Now the drain is accepted: the node shows as draining, then holding no replica.
	began := time.Now()
	b.run("drain", b.click(drainButton+".drain"), chromedp.WaitVisible("#cluster-result .ok", chromedp.ByQuery))
	agree("the drained node holding nothing", func(st explorerClusterStatus, v clusterViewRows) error {
		if n := row(v, target); n.Status != "live, draining" || n.Replicas != "0" || n.Leaders != "0" || n.Button != "Cancel drain" {
			return fmt.Errorf("the drained node is shown as %+v", n)
		}
		return nil
	})
	t.Logf("the view showed node %s drained %v after the click", target, time.Since(began).Round(time.Millisecond))
	b.shot("cluster")

	// Cancelling the drain has replicas move back to it.
	b.run("cancel the drain", b.click(drainButton+".undrain"), chromedp.WaitVisible("#cluster-result .ok", chromedp.ByQuery))
	if msg := b.text("#cluster-result"); !strings.Contains(msg, "cancelled") {
		t.Fatalf("the cancel reads %q", msg)
	}
	agree("the node holding a replica again", holdsSome(target))
	if d := b.dialogs(); len(d) != 3 || !strings.Contains(d[2], "Cancel the drain of node "+target) {
		t.Fatalf("the confirmations asked were %q", d)
	}
	b.check()
}

// On a node alone the view says so, and lists its partitions, led by itself.
func TestExplorerClusterSingleNode(t *testing.T) {
	if os.Getenv("PARTITA_E2E_CLUSTER") != "" {
		t.Skip("startServer starts a cluster")
	}
	browser := findChromium(t)
	s := startServer(t, false)
	rc := rawClient{s: s, key: emulatorKey, now: time.Now}
	if code, _, body := rc.do(t, "POST", "/dbs", []byte(`{"id":"db"}`), nil); code != 201 {
		t.Fatalf("create database: %d %s", code, body)
	}
	if code, _, body := rc.do(t, "POST", "/dbs/db/colls", []byte(`{"id":"c","partitionKey":{"paths":["/pk"],"kind":"Hash","version":2}}`), nil); code != 201 {
		t.Fatalf("create container: %d %s", code, body)
	}
	b := openExplorer(t, browser)
	b.run("open", chromedp.Navigate(s.Endpoint+"_explorer/#/cluster"), chromedp.WaitVisible("#key", chromedp.ByID),
		chromedp.SetValue("#key", emulatorKey, chromedp.ByID), chromedp.Click("#login", chromedp.ByID),
		chromedp.WaitVisible("#cluster-single .note", chromedp.ByQuery), chromedp.WaitVisible("#cluster-partitions", chromedp.ByID))
	if msg := b.text("#cluster-single"); !strings.Contains(msg, "single node, not a cluster") {
		t.Fatalf("a node alone reads %q", msg)
	}
	v := b.clusterRows()
	if len(v.Nodes) != 0 || len(v.Partitions) != 1 || v.Partitions[0].Key != "db/c/0" || v.Partitions[0].Leader != "this node" {
		t.Fatalf("a node alone shows %+v", v)
	}
	if n := b.count("#main .error"); n != 0 {
		t.Fatalf("a node alone shows an error: %s", b.text("#main"))
	}
	b.check()
}

// explorerClusterStatus is what GET /_partita/cluster answers (engine.NodeStatus), as far as
// the view shows it.
type explorerClusterStatus struct {
	Node       uint64 `json:"node"`
	Registered bool   `json:"registered"`
	Ready      bool   `json:"ready"`
	Nodes      []struct {
		ID       uint64 `json:"id"`
		Addr     string `json:"addr"`
		API      string `json:"api"`
		Draining bool   `json:"draining"`
		Down     bool   `json:"down"`
		Version  uint32 `json:"version"`
	} `json:"nodes"`
	ClusterVersion uint32 `json:"clusterVersion"`
	// Replicas are the node's own; Elsewhere the partitions it holds no replica of.
	Replicas  []explorerPartition `json:"replicas"`
	Elsewhere []explorerPartition `json:"elsewhere"`
}

type explorerPartition struct {
	Database  string   `json:"database"`
	Container string   `json:"container"`
	Partition uint32   `json:"partition"`
	Leader    uint64   `json:"leader"`
	Voters    []uint64 `json:"voters"`
	Learners  []uint64 `json:"learners"`
	Leading   bool     `json:"leading"`
	Quorum    string   `json:"quorum"`
	Members   []struct {
		Node   uint64 `json:"node"`
		Down   bool   `json:"down"`
		Lag    uint64 `json:"lag"`
		Active bool   `json:"active"`
	} `json:"members"`
}

// partitions are every partition the status describes, in the view's order.
func (st explorerClusterStatus) partitions() []explorerPartition {
	all := append(slices.Clone(st.Replicas), st.Elsewhere...)
	slices.SortFunc(all, func(a, b explorerPartition) int {
		return cmp.Or(cmp.Compare(a.Database, b.Database), cmp.Compare(a.Container, b.Container), cmp.Compare(a.Partition, b.Partition))
	})
	return all
}

// clusterStatusOf asks s for its status, signed as the management API documents: type
// "cluster", link "".
func clusterStatusOf(t *testing.T, s *server) explorerClusterStatus {
	t.Helper()
	req, err := http.NewRequest("GET", s.Endpoint+"_partita/cluster", nil)
	if err != nil {
		t.Fatal(err)
	}
	key, _ := masterkey.Parse(emulatorKey)
	date := time.Now().UTC().Format(http.TimeFormat)
	req.Header.Set("x-ms-date", date)
	req.Header.Set("Authorization", key.Authorization("GET", "cluster", "", date))
	resp, err := s.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var st explorerClusterStatus
	if resp.StatusCode != 200 || json.Unmarshal(body, &st) != nil {
		t.Fatalf("GET /_partita/cluster: %d %s", resp.StatusCode, body)
	}
	return st
}

// clusterViewRows is what the cluster view shows, read from its tables.
type clusterViewRows struct {
	Nodes      []clusterViewNode `json:"nodes"`
	Partitions []struct {
		Key      string `json:"key"`
		Range    string `json:"range"`
		Leader   string `json:"leader"`
		Voters   string `json:"voters"`
		Learners string `json:"learners"`
	} `json:"partitions"`
}

type clusterViewNode struct {
	ID       string `json:"id"`
	Node     string `json:"node"`
	Addr     string `json:"addr"`
	API      string `json:"api"`
	Status   string `json:"status"`
	Replicas string `json:"replicas"`
	Leaders  string `json:"leaders"`
	Learners string `json:"learners"`
	Button   string `json:"button"`
}

// matches reports how the view differs from a status: every node with its id, addresses and
// liveness, what it holds by the status's groups, and every partition with its leader,
// voters and learners, named by their cluster addresses.
func (v clusterViewRows) matches(st explorerClusterStatus) error {
	addr := map[uint64]string{}
	for _, n := range st.Nodes {
		addr[n.ID] = n.Addr
	}
	if len(v.Nodes) != len(st.Nodes) {
		return fmt.Errorf("the page shows %d nodes, the API %d", len(v.Nodes), len(st.Nodes))
	}
	for i, n := range st.Nodes {
		state := "live"
		switch {
		case n.Down:
			state = "down"
		case n.Draining:
			state = "live, draining"
		}
		replicas, leaders, learners := 0, 0, 0
		for _, r := range st.partitions() {
			if slices.Contains(r.Voters, n.ID) || slices.Contains(r.Learners, n.ID) {
				replicas++
			}
			if r.Leader == n.ID {
				leaders++
			}
			if slices.Contains(r.Learners, n.ID) {
				learners++
			}
		}
		want := clusterViewNode{ID: fmt.Sprintf("%x", n.ID), Addr: n.Addr, API: n.API, Status: state,
			Replicas: fmt.Sprint(replicas), Leaders: fmt.Sprint(leaders), Learners: fmt.Sprint(learners)}
		got := v.Nodes[i]
		got.Node, got.Button = "", ""
		if got != want {
			return fmt.Errorf("node %d is shown as %+v, the API says %+v", i, got, want)
		}
	}
	if len(v.Partitions) != len(st.partitions()) {
		return fmt.Errorf("the page shows %d partitions, the API %d", len(v.Partitions), len(st.partitions()))
	}
	names := func(ids []uint64) string {
		var out []string
		for _, id := range ids {
			out = append(out, addr[id])
		}
		if len(out) == 0 {
			return "–"
		}
		return strings.Join(out, ", ")
	}
	for i, r := range st.partitions() {
		p := v.Partitions[i]
		strip := func(s string) string { return strings.ReplaceAll(s, " (this node)", "") }
		if key := fmt.Sprintf("%s/%s/%d", r.Database, r.Container, r.Partition); p.Key != key || strip(p.Leader) != addr[r.Leader] ||
			strip(p.Voters) != names(r.Voters) || strip(p.Learners) != names(r.Learners) {
			return fmt.Errorf("partition %s is shown as %+v; the API says leader %s, voters %s, learners %s", key, p, addr[r.Leader], names(r.Voters), names(r.Learners))
		}
	}
	return nil
}

// explorerBrowser is a headless Chromium on the explorer that accepts every confirmation the
// page asks, and records the page's script errors and breaches of its security policy.
type explorerBrowser struct {
	t   *testing.T
	ctx context.Context

	mu       sync.Mutex
	asked    []string
	jsErrors []string
}

func openExplorer(t *testing.T, browser string) *explorerBrowser {
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(browser), chromedp.WindowSize(1280, 800))
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox) // Chromium refuses to run its sandbox as root
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancelAlloc)
	bctx, cancelBrowser := chromedp.NewContext(actx, chromedp.WithErrorf(t.Logf))
	t.Cleanup(cancelBrowser)
	ctx, cancel := context.WithTimeout(bctx, 4*time.Minute)
	t.Cleanup(cancel)
	b := &explorerBrowser{t: t, ctx: ctx}
	chromedp.ListenTarget(ctx, func(ev any) {
		switch e := ev.(type) {
		case *page.EventJavascriptDialogOpening:
			b.mu.Lock()
			b.asked = append(b.asked, e.Message)
			b.mu.Unlock()
			// The page waits for the answer, and so does the click that opened the dialog:
			// answer from another goroutine.
			go chromedp.Run(ctx, page.HandleJavaScriptDialog(true))
		case *runtime.EventExceptionThrown:
			b.mu.Lock()
			b.jsErrors = append(b.jsErrors, e.ExceptionDetails.Error())
			b.mu.Unlock()
		}
	})
	watchCSP := chromedp.ActionFunc(func(ctx context.Context) error {
		_, err := page.AddScriptToEvaluateOnNewDocument(`window.__csp = [];
			document.addEventListener('securitypolicyviolation', e => window.__csp.push(e.violatedDirective + ' ' + e.blockedURI));`).Do(ctx)
		return err
	})
	b.run("start", watchCSP, chromedp.EmulateViewport(1280, 800))
	return b
}

func (b *explorerBrowser) run(what string, actions ...chromedp.Action) {
	b.t.Helper()
	if err := chromedp.Run(b.ctx, actions...); err != nil {
		b.t.Fatalf("%s: %v", what, err)
	}
}

// click clicks the button sel names, found and clicked in one evaluation: the view redraws
// its tables as leaderships move, and a node found by one protocol call may be gone by the
// next. The evaluation returns once the confirmation the click asks is answered.
func (b *explorerBrowser) click(sel string) chromedp.Action {
	return chromedp.Evaluate(fmt.Sprintf(`document.querySelector(%q).click()`, sel), nil)
}

// eval reads an expression's value in one evaluation: the view redraws its tables, and a node
// found by one protocol call may be gone by the next.
func (b *explorerBrowser) eval(expr string, out any) {
	b.t.Helper()
	b.run("evaluate "+expr, chromedp.Evaluate(expr, out))
}

func (b *explorerBrowser) text(sel string) string {
	b.t.Helper()
	var s string
	b.eval(fmt.Sprintf(`(document.querySelector(%q) || {}).innerText || ''`, sel), &s)
	return s
}

func (b *explorerBrowser) count(sel string) int {
	b.t.Helper()
	var n int
	b.eval(fmt.Sprintf(`document.querySelectorAll(%q).length`, sel), &n)
	return n
}

func (b *explorerBrowser) clusterRows() clusterViewRows {
	b.t.Helper()
	var v clusterViewRows
	b.eval(`(() => {
		const cell = (tr, sel) => (tr.querySelector(sel) || {}).innerText || '';
		return {
			nodes: [...document.querySelectorAll('#cluster-nodes tbody tr')].map(tr => ({
				id: tr.dataset.id, node: cell(tr, 'td.node'), addr: tr.dataset.addr, api: cell(tr, 'td.api'), status: cell(tr, 'td.status'),
				replicas: cell(tr, 'td.replicas'), leaders: cell(tr, 'td.leaders'), learners: cell(tr, 'td.learners'), button: cell(tr, 'button'),
			})),
			partitions: [...document.querySelectorAll('#cluster-partitions tbody tr')].map(tr => ({
				key: tr.dataset.key, range: cell(tr, 'td:nth-child(4)'), leader: cell(tr, 'td.leader'), voters: cell(tr, 'td.voters'), learners: cell(tr, 'td.learners'),
			})),
		};
	})()`, &v)
	return v
}

// shot saves the page as explorer-{name}.png in $PARTITA_SCREENSHOTS, when it is set (as
// TestExplorer does for docs/images).
func (b *explorerBrowser) shot(name string) {
	b.t.Helper()
	dir := os.Getenv("PARTITA_SCREENSHOTS")
	if dir == "" {
		return
	}
	var png []byte
	// The pointer moves off the page's links, whose hover would show.
	b.run("screenshot "+name, chromedp.ActionFunc(func(ctx context.Context) error {
		return input.DispatchMouseEvent(input.MouseMoved, 1, 790).Do(ctx)
	}), chromedp.Sleep(300*time.Millisecond), chromedp.CaptureScreenshot(&png))
	if err := os.WriteFile(filepath.Join(dir, "explorer-"+name+".png"), png, 0o644); err != nil {
		b.t.Fatal(err)
	}
}

// dialogs are the confirmations the page asked so far.
func (b *explorerBrowser) dialogs() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.asked)
}

// check fails the test on a script error or a breach of the content security policy.
func (b *explorerBrowser) check() {
	b.t.Helper()
	var violations []string
	b.eval(`window.__csp`, &violations)
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.jsErrors) > 0 || len(violations) > 0 {
		b.t.Fatalf("script errors %q, content security policy violations %q", b.jsErrors, violations)
	}
}
