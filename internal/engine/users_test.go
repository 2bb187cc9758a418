package engine

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/rid"
)

func mustUser(t *testing.T, e *Engine, db, id string) UserInfo {
	t.Helper()
	u, err := e.CreateUser(db, id)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func mustPermission(t *testing.T, e *Engine, db, user string, s PermissionSpec) PermissionInfo {
	t.Helper()
	p, err := e.CreatePermission(db, user, s)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func wantKind(t *testing.T, what string, err error, kind fault.Kind) {
	t.Helper()
	if !errors.Is(err, kind) {
		t.Fatalf("%s: got %v, want %s", what, err, kind)
	}
}

func TestUsersCRUD(t *testing.T) {
	e, _ := newContainer(t, Options{}, ContainerSpec{})
	u := mustUser(t, e, "db", "alice")
	if !strings.HasPrefix(u.Self, "dbs/") || !strings.Contains(u.Self, "/users/"+u.RID+"/") {
		t.Fatalf("self link %q", u.Self)
	}
	if b, ok := rid.Decode(u.RID); !ok || len(b) != 8 || b[4]&0x80 != 0 {
		t.Fatalf("a user's rid is 8 bytes with the container bit clear, got %q", u.RID)
	}
	_, err := e.CreateUser("db", "alice")
	wantKind(t, "second alice", err, fault.Conflict)
	_, err = e.CreateUser("nodb", "bob")
	wantKind(t, "user of a missing database", err, fault.NotFound)
	for _, bad := range []string{"", "a/b", "a?b", strings.Repeat("x", 256)} {
		_, err = e.CreateUser("db", bad)
		wantKind(t, "user id "+bad, err, fault.BadRequest)
	}
	mustUser(t, e, "db", "bob")
	list, err := e.Users("db")
	if err != nil || len(list) != 2 || list[0].ID != "alice" || list[1].ID != "bob" {
		t.Fatalf("users: %+v %v", list, err)
	}

	// A replace renames, keeping the rid; a stale etag or a taken id is refused.
	_, err = e.ReplaceUser("db", "alice", "carol", "stale")
	wantKind(t, "replace with a stale etag", err, fault.PreconditionFailed)
	_, err = e.ReplaceUser("db", "alice", "bob", "")
	wantKind(t, "rename onto bob", err, fault.Conflict)
	r, err := e.ReplaceUser("db", "alice", "carol", u.ETag)
	if err != nil || r.RID != u.RID || r.ETag == u.ETag || r.ID != "carol" {
		t.Fatalf("rename: %+v %v", r, err)
	}
	_, err = e.User("db", "alice")
	wantKind(t, "the old name", err, fault.NotFound)

	// Upsert creates, then replaces.
	if _, created, err := e.UpsertUser("db", "dave"); err != nil || !created {
		t.Fatalf("upsert a new user: %v %v", created, err)
	}
	if _, created, err := e.UpsertUser("db", "dave"); err != nil || created {
		t.Fatalf("upsert an existing user: %v %v", created, err)
	}

	wantKind(t, "delete with a stale etag", e.DeleteUser("db", "carol", "stale"), fault.PreconditionFailed)
	if err := e.DeleteUser("db", "carol", r.ETag); err != nil {
		t.Fatal(err)
	}
	wantKind(t, "delete again", e.DeleteUser("db", "carol", ""), fault.NotFound)
}

func TestPermissionsCRUD(t *testing.T) {
	e, c := newContainer(t, Options{}, ContainerSpec{})
	mustUser(t, e, "db", "alice")
	all := mustPermission(t, e, "db", "alice", PermissionSpec{ID: "p", Mode: "all", Resource: "dbs/db/colls/c"})
	if all.Mode != ModeAll || all.Link != "dbs/db/colls/c" || all.PartitionKey != nil || !c.Granted(all.Grant) {
		t.Fatalf("permission: %+v", all)
	}
	if b, ok := rid.Decode(all.RID); !ok || len(b) != 16 || all.Grant.Permission.String() != all.RID {
		t.Fatalf("a permission's rid is 16 bytes, got %q", all.RID)
	}
	// By rids, as in the container's _self, and for one partition key.
	self := "dbs/" + c.db.rid.String() + "/colls/" + c.RID() + "/"
	one := mustPermission(t, e, "db", "alice", PermissionSpec{ID: "q", Mode: "Read", Resource: self, PartitionKey: key("k")})
	if one.Mode != ModeRead || one.Link != self || !reflect.DeepEqual(one.PartitionKey, key("k")) || !c.Granted(one.Grant) {
		t.Fatalf("permission by rid: %+v", one)
	}

	for _, tc := range []struct {
		name string
		spec PermissionSpec
		kind fault.Kind
	}{
		{"same id", PermissionSpec{ID: "p", Mode: "All", Resource: "dbs/db/colls/c", PartitionKey: key("z")}, fault.Conflict},
		{"same resource", PermissionSpec{ID: "r", Mode: "Read", Resource: "/dbs/db/colls/c/"}, fault.Conflict},
		{"same resource and key", PermissionSpec{ID: "r", Mode: "All", Resource: "dbs/db/colls/c", PartitionKey: key("k")}, fault.Conflict},
		{"mode none", PermissionSpec{ID: "r", Mode: "None", Resource: "dbs/db/colls/c"}, fault.BadRequest},
		{"no mode", PermissionSpec{ID: "r", Resource: "dbs/db/colls/c"}, fault.BadRequest},
		{"a database", PermissionSpec{ID: "r", Mode: "All", Resource: "dbs/db"}, fault.BadRequest},
		{"an item", PermissionSpec{ID: "r", Mode: "All", Resource: "dbs/db/colls/c/docs/x"}, fault.BadRequest},
		{"empty", PermissionSpec{ID: "r", Mode: "All"}, fault.BadRequest},
		{"another database", PermissionSpec{ID: "r", Mode: "All", Resource: "dbs/other/colls/c"}, fault.BadRequest},
		{"missing container", PermissionSpec{ID: "r", Mode: "All", Resource: "dbs/db/colls/nope"}, fault.NotFound},
		{"missing container by rid", PermissionSpec{ID: "r", Mode: "All", Resource: "dbs/" + c.db.rid.String() + "/colls/AAAAAAAAAAA="}, fault.NotFound},
		{"key too long", PermissionSpec{ID: "r", Mode: "All", Resource: "dbs/db/colls/c", PartitionKey: epk.Key{epk.String("a"), epk.String("b")}}, fault.BadRequest},
		{"bad id", PermissionSpec{ID: "a/b", Mode: "All", Resource: "dbs/db/colls/c"}, fault.BadRequest},
	} {
		_, err := e.CreatePermission("db", "alice", tc.spec)
		wantKind(t, tc.name, err, tc.kind)
	}
	_, err := e.CreatePermission("db", "nobody", PermissionSpec{ID: "r", Mode: "All", Resource: "dbs/db/colls/c"})
	wantKind(t, "permission of a missing user", err, fault.NotFound)

	list, err := e.Permissions("db", "alice")
	if err != nil || len(list) != 2 || list[0].ID != "p" || list[1].ID != "q" {
		t.Fatalf("permissions in creation order: %+v %v", list, err)
	}

	// A replace keeps the rid and narrows what the permission grants at once.
	_, err = e.ReplacePermission("db", "alice", "p", PermissionSpec{ID: "p", Mode: "Read", Resource: "dbs/db/colls/c"}, "stale")
	wantKind(t, "replace with a stale etag", err, fault.PreconditionFailed)
	_, err = e.ReplacePermission("db", "alice", "p", PermissionSpec{ID: "q", Mode: "Read", Resource: "dbs/db/colls/c"}, "")
	wantKind(t, "rename onto q", err, fault.Conflict)
	r, err := e.ReplacePermission("db", "alice", "p", PermissionSpec{ID: "p", Mode: "Read", Resource: "dbs/db/colls/c", PartitionKey: key("j")}, all.ETag)
	if err != nil || r.RID != all.RID || r.ETag == all.ETag {
		t.Fatalf("replace: %+v %v", r, err)
	}
	g, err := e.Grant(all.Grant.Permission)
	if err != nil || g.Mode != ModeRead || !reflect.DeepEqual(g.PartitionKey, key("j")) {
		t.Fatalf("grant after the replace: %+v %v", g, err)
	}

	// Upsert replaces by id, or creates.
	if _, created, err := e.UpsertPermission("db", "alice", PermissionSpec{ID: "p", Mode: "All", Resource: "dbs/db/colls/c"}); err != nil || created {
		t.Fatalf("upsert p: %v %v", created, err)
	}
	if _, created, err := e.UpsertPermission("db", "alice", PermissionSpec{ID: "s", Mode: "All", Resource: "dbs/db/colls/c", PartitionKey: key("s")}); err != nil || !created {
		t.Fatalf("upsert s: %v %v", created, err)
	}

	// Deleting a permission revokes it; deleting its user revokes the others.
	wantKind(t, "delete with a stale etag", e.DeletePermission("db", "alice", "q", "stale"), fault.PreconditionFailed)
	if err := e.DeletePermission("db", "alice", "q", one.ETag); err != nil {
		t.Fatal(err)
	}
	_, err = e.Grant(one.Grant.Permission)
	wantKind(t, "grant of a deleted permission", err, fault.NotFound)
	if _, err := e.Grant(all.Grant.Permission); err != nil {
		t.Fatal(err)
	}
	if err := e.DeleteUser("db", "alice", ""); err != nil {
		t.Fatal(err)
	}
	_, err = e.Grant(all.Grant.Permission)
	wantKind(t, "grant of a deleted user's permission", err, fault.NotFound)
	// A user of the same name later has other rids: the old tokens stay dead.
	mustUser(t, e, "db", "alice")
	again := mustPermission(t, e, "db", "alice", PermissionSpec{ID: "p", Mode: "All", Resource: "dbs/db/colls/c"})
	if again.RID == all.RID {
		t.Fatal("a permission rid was reused")
	}
	_, err = e.Grant(all.Grant.Permission)
	wantKind(t, "grant of the old permission", err, fault.NotFound)
}

// A permission is bound to its container by rid: the container deleted and created again
// under its id is not granted.
func TestPermissionBoundToContainer(t *testing.T) {
	e, c := newContainer(t, Options{}, ContainerSpec{})
	mustUser(t, e, "db", "alice")
	p := mustPermission(t, e, "db", "alice", PermissionSpec{ID: "p", Mode: "All", Resource: "dbs/db/colls/c"})
	if err := e.DeleteContainer("db", "c", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := e.CreateContainer("db", ContainerSpec{ID: "c", PartitionKey: c.def}); err != nil {
		t.Fatal(err)
	}
	c2, _ := e.Container("db", "c")
	g, err := e.Grant(p.Grant.Permission)
	if err != nil || c2.Granted(g) || !c.Granted(g) {
		t.Fatalf("grant %+v %v: granted the new container", g, err)
	}
}

// Users and permissions are catalog records: they survive a restart with their rids and
// etags, numbers are not reused after it, and they go with their database.
func TestUsersSurviveRestartAndGoWithTheirDatabase(t *testing.T) {
	dir := t.TempDir()
	e := openEngine(t, dir, Options{})
	if _, err := e.CreateDatabase("db", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := e.CreateContainer("db", ContainerSpec{ID: "c", PartitionKey: PartitionKeyDef{Paths: []string{"/a", "/b"}, Kind: "MultiHash", Version: 2}}); err != nil {
		t.Fatal(err)
	}
	u := mustUser(t, e, "db", "alice")
	prefix := mustPermission(t, e, "db", "alice", PermissionSpec{ID: "p", Mode: "Read", Resource: "dbs/db/colls/c", PartitionKey: epk.Key{epk.String("x")}})
	full := mustPermission(t, e, "db", "alice", PermissionSpec{ID: "q", Mode: "All", Resource: "dbs/db/colls/c",
		PartitionKey: epk.Key{epk.Number(-0.5), epk.Undefined()}})
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}

	e = openEngine(t, dir, Options{})
	defer e.Close()
	if got, err := e.User("db", "alice"); err != nil || got != u {
		t.Fatalf("user after a restart: %+v %v, want %+v", got, err, u)
	}
	for _, want := range []PermissionInfo{prefix, full} {
		got, err := e.Permission("db", "alice", want.ID)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("permission after a restart: %+v %v, want %+v", got, err, want)
		}
		if g, err := e.Grant(want.Grant.Permission); err != nil || !reflect.DeepEqual(g, want.Grant) {
			t.Fatalf("grant after a restart: %+v %v", g, err)
		}
	}
	next := mustUser(t, e, "db", "bob")
	if next.RID == u.RID || next.ETag == u.ETag {
		t.Fatalf("a number was reused after the restart: %+v and %+v", next, u)
	}

	if err := e.DeleteDatabase("db", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Grant(full.Grant.Permission); !errors.Is(err, fault.NotFound) {
		t.Fatalf("grant after its database was deleted: %v", err)
	}
	if _, err := e.CreateDatabase("db", nil); err != nil {
		t.Fatal(err)
	}
	if list, err := e.Users("db"); err != nil || len(list) != 0 {
		t.Fatalf("the new database has users: %+v %v", list, err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e = openEngine(t, dir, Options{})
	defer e.Close()
	if list, err := e.Users("db"); err != nil || len(list) != 0 {
		t.Fatalf("the deleted database's users came back after a restart: %+v %v", list, err)
	}
}
