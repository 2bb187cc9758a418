package web

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func get(t *testing.T, h http.Handler, method, path string, hdr map[string]string) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest(method, path, nil)
	for k, v := range hdr {
		r.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func TestHandler(t *testing.T) {
	h := Handler()
	w := get(t, h, "GET", "/_explorer/", nil)
	if w.Code != 200 || !strings.Contains(w.Body.String(), `<script type="module" src="js/app.js">`) {
		t.Fatalf("index: %d %s", w.Code, w.Body)
	}
	for k, v := range securityHeaders {
		if w.Header().Get(k) != v {
			t.Fatalf("%s is %q", k, w.Header().Get(k))
		}
	}
	if w.Header().Get("Cache-Control") != "no-cache" || w.Header().Get("ETag") == "" {
		t.Fatalf("cache headers %v", w.Header())
	}
	// A browser that has the file gets a 304.
	if w := get(t, h, "GET", "/_explorer/index.html", map[string]string{"If-None-Match": w.Header().Get("ETag")}); w.Code != http.StatusNotModified {
		t.Fatalf("revalidation answered %d", w.Code)
	}
	if w := get(t, h, "GET", "/_explorer/js/app.js", nil); w.Code != 200 || w.Header().Get("Content-Type") != "text/javascript; charset=utf-8" {
		t.Fatalf("app.js: %d %q", w.Code, w.Header().Get("Content-Type"))
	}
	if w := get(t, h, "GET", "/_explorer", nil); w.Code != http.StatusMovedPermanently || w.Header().Get("Location") != "/_explorer/" {
		t.Fatalf("redirect: %d %q", w.Code, w.Header().Get("Location"))
	}
	for _, p := range []string{"/_explorer/missing.js", "/_explorer/../go.mod", "/_explorer/js/"} {
		if w := get(t, h, "GET", p, nil); w.Code != http.StatusNotFound {
			t.Fatalf("%s answered %d", p, w.Code)
		}
	}
	if w := get(t, h, "POST", "/_explorer/", nil); w.Code != http.StatusMethodNotAllowed {
		t.Fatalf("POST answered %d", w.Code)
	}
}

// No asset may hold inline script or load anything from another origin: the content security
// policy would block it, and the explorer must work offline.
func TestAssetsAreSelfContained(t *testing.T) {
	h := Handler()
	for _, name := range []string{"index.html", "style.css", "js/app.js", "js/api.js", "js/dom.js", "js/views/map.js", "js/views/cluster.js"} {
		body := get(t, h, "GET", Prefix+name, nil).Body.String()
		if body == "" {
			t.Fatalf("%s is empty or missing", name)
		}
		for _, bad := range []string{"http://", "https://", "<script>", " onclick=", "eval("} {
			if strings.Contains(body, bad) && !(bad == "http://" && strings.Contains(body, "http://www.w3.org/2000/svg")) {
				t.Fatalf("%s contains %q", name, bad)
			}
		}
	}
	if !Serves("/_explorer") || !Serves("/_explorer/js/app.js") || Serves("/dbs") || Serves("/_explorerx") {
		t.Fatal("Serves routes the wrong paths")
	}
}
