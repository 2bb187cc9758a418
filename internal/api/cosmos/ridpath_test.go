package cosmos

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// Resources addressed by their _self links, made of resource ids, and signed as the SDKs sign
// them (the Python SDK 3.x's auth.GetAuthorizationHeader): over the resource id of what the
// path names, or of a feed's parent, in lower case.
func TestResourceIDPaths(t *testing.T) {
	s := newFaultServer(t)
	signed := func(method, path, typ, link, body string, hdr map[string]string) *httptest.ResponseRecorder {
		return s.send(s.key.Authorization(method, typ, link, s.clock().Format(http.TimeFormat)), method, path, body, hdr)
	}
	w := s.master("POST", "/dbs/db/colls/c/docs", `{"id":"a","pk":"a","n":1}`, pk("a"))
	expect(t, w, http.StatusCreated, "create by name")
	var doc struct{ RID, Self string }
	json.Unmarshal(w.Body.Bytes(), &struct {
		RID  *string `json:"_rid"`
		Self *string `json:"_self"`
	}{&doc.RID, &doc.Self})
	parts := strings.Split(strings.Trim(doc.Self, "/"), "/") // dbs {db} colls {coll} docs {doc}
	dbRID, collRID := parts[1], parts[3]

	expect(t, signed("GET", "/"+doc.Self, "docs", strings.ToLower(doc.RID), "", pk("a")), http.StatusOK, "read by _self")
	expect(t, signed("GET", "/dbs/"+dbRID+"/colls/"+collRID+"/docs", "docs", strings.ToLower(collRID), "", nil), http.StatusOK, "read feed by the container's rid")
	expect(t, signed("GET", "/dbs/"+dbRID, "dbs", strings.ToLower(dbRID), "", nil), http.StatusOK, "read the database by rid")
	expect(t, signed("GET", "/dbs/"+dbRID+"/colls/"+collRID, "colls", strings.ToLower(collRID), "", nil), http.StatusOK, "read the container by rid")
	w = signed("PUT", "/"+doc.Self, "docs", strings.ToLower(doc.RID), `{"id":"a","pk":"a","n":2}`, pk("a"))
	expect(t, w, http.StatusOK, "replace by _self")
	w = s.master("GET", "/dbs/db/colls/c/docs/a", "", pk("a"))
	if !strings.Contains(w.Body.String(), `"n":2`) {
		t.Fatalf("the replace by _self did not reach the item: %s", w.Body)
	}
	// Signed over the link as written, or by name: refused.
	expect(t, signed("GET", "/"+doc.Self, "docs", strings.Trim(doc.Self, "/"), "", pk("a")), http.StatusUnauthorized, "signed over the path")
	// An rid that names nothing under its parent.
	other := strings.ToLower(collRID) // a container's rid is no document's
	expect(t, signed("GET", "/dbs/"+dbRID+"/colls/"+collRID+"/docs/"+collRID+"AAAAAAAAAAA=", "docs", other+"aaaaaaaaaaa=", "", pk("a")), http.StatusNotFound, "a document rid that names none")
	expect(t, signed("DELETE", "/"+doc.Self, "docs", strings.ToLower(doc.RID), "", pk("a")), http.StatusNoContent, "delete by _self")
	expect(t, signed("GET", "/"+doc.Self, "docs", strings.ToLower(doc.RID), "", pk("a")), http.StatusNotFound, "read by _self once deleted")
}
