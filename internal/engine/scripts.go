package engine

import (
	"fmt"
	"slices"
	"strings"

	"github.com/partita-db/partita/internal/catalog"
	"github.com/partita-db/partita/internal/document"
	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/rid"
)

// A container's scripts (stored procedures, triggers, user-defined functions) are catalog
// resources: they are kept in the container's record, changed under Engine.mu with a synced
// write and a new catalog version (their etag), and published as an immutable scriptSet that
// the execution paths read without a lock. This file stores them; it never runs or compiles
// their JavaScript.

// ScriptKind is the kind of a container's script.
type ScriptKind uint8

// The kinds of scripts.
const (
	ProcedureScript ScriptKind = iota // a stored procedure
	TriggerScript                     // a pre- or post-trigger
	FunctionScript                    // a user-defined function (UDF)
	numScriptKinds
)

// scriptKinds describe each kind. The quotas are Cosmos DB's defaults: 100 stored procedures
// and 50 UDFs per container ("Per-container limits" in
// https://learn.microsoft.com/azure/cosmos-db/concepts-limits); that page gives no figure for
// triggers, and 25 is what the service reports in its x-ms-resource-quota header
// ("storedProcedures=100;triggers=25;functions=25").
var scriptKinds = [numScriptKinds]struct {
	path  string // in Cosmos's resource paths
	noun  string // in messages
	quota int
	tag   rid.ChildKind
}{
	ProcedureScript: {"sprocs", "stored procedure", 100, rid.StoredProcedure},
	TriggerScript:   {"triggers", "trigger", 25, rid.Trigger},
	FunctionScript:  {"udfs", "user-defined function", 50, rid.UserDefinedFunction},
}

// String is the kind's name in Cosmos's resource paths: "sprocs", "triggers" or "udfs".
func (k ScriptKind) String() string {
	if k >= numScriptKinds {
		return "scripts"
	}
	return scriptKinds[k].path
}

func (k ScriptKind) check() error {
	if k >= numScriptKinds {
		return fault.New(fault.BadRequest, "Unknown kind of script %d", k)
	}
	return nil
}

// MaxScriptBytes caps a script's body. Cosmos DB documents no cap of its own below its 2 MB
// request size; 256 KiB is far above real scripts and bounds the container's catalog record,
// which holds every script and is rewritten whole on each change to the container.
const MaxScriptBytes = 256 << 10

// The trigger types and operations Cosmos accepts, in its spelling. The SDKs differ in case
// (the JavaScript SDK sends "pre" and "all", .NET "Pre" and "All"), so they are matched
// without it and stored as here.
var (
	triggerTypes      = []string{"Pre", "Post"}
	triggerOperations = []string{"All", "Create", "Update", "Delete", "Replace"}
)

// Script is a stored procedure, trigger or user-defined function of a container.
type Script struct {
	Kind ScriptKind
	ID   string
	Body string // the JavaScript source
	// TriggerType ("Pre" or "Post") and TriggerOperation ("All", "Create", "Update",
	// "Delete" or "Replace") are set for triggers only.
	TriggerType      string
	TriggerOperation string
	RID              string // the script's _rid
	Self             string // its _self link
	ETag             string // unquoted
	TS               int64
}

// scriptRecord is a script as the container's catalog record keeps it.
type scriptRecord struct {
	Kind             ScriptKind `json:"kind"`
	ID               string     `json:"id"`
	Body             string     `json:"body"`
	TriggerType      string     `json:"triggerType,omitempty"`
	TriggerOperation string     `json:"triggerOperation,omitempty"`
	Num              uint64     `json:"num"` // in the rid; never reused in the container
	TS               int64      `json:"ts"`
	Version          uint64     `json:"version"` // catalog version of its last change; the etag derives from it
}

// scriptSet is a container's scripts at one moment. It is never changed: every change builds
// a new one and swaps it in.
type scriptSet struct {
	byID [numScriptKinds]map[string]Script
	list [numScriptKinds][]Script // in creation order
}

func (c *Container) newScriptSet(recs []scriptRecord) *scriptSet {
	s := &scriptSet{}
	for k := range s.byID {
		s.byID[k] = map[string]Script{}
	}
	for _, r := range recs {
		sc := c.scriptOf(r)
		s.byID[r.Kind][r.ID] = sc
		s.list[r.Kind] = append(s.list[r.Kind], sc)
	}
	return s
}

func (c *Container) scriptOf(r scriptRecord) Script {
	id := rid.Child(c.rid, scriptKinds[r.Kind].tag, r.Num)
	return Script{
		Kind: r.Kind, ID: r.ID, Body: r.Body, TriggerType: r.TriggerType, TriggerOperation: r.TriggerOperation,
		RID:  id,
		Self: "dbs/" + c.db.rid.String() + "/colls/" + c.rid.String() + "/" + r.Kind.String() + "/" + id + "/",
		ETag: versionETag(r.Version), TS: r.TS,
	}
}

// normalize checks what a client gives of a script and puts the trigger fields in Cosmos's
// spelling (clearing them for other kinds). The JavaScript is compiled by validate.
func (s *Script) normalize() error {
	if err := s.Kind.check(); err != nil {
		return err
	}
	if err := document.ValidateID(s.ID); err != nil {
		return err
	}
	noun := scriptKinds[s.Kind].noun
	if strings.TrimSpace(s.Body) == "" {
		return fault.New(fault.BadRequest, "The body of %s %q must be a non-empty string of JavaScript", noun, s.ID)
	}
	if len(s.Body) > MaxScriptBytes {
		return fault.New(fault.BadRequest, "The body of %s %q is %d bytes; the limit is %d bytes", noun, s.ID, len(s.Body), MaxScriptBytes)
	}
	if s.Kind != TriggerScript {
		s.TriggerType, s.TriggerOperation = "", ""
		return nil
	}
	var ok bool
	if s.TriggerType, ok = spelled(s.TriggerType, triggerTypes); !ok {
		return fault.New(fault.BadRequest, "The triggerType %q of trigger %q is not valid; it must be one of %s", s.TriggerType, s.ID, strings.Join(triggerTypes, ", "))
	}
	if s.TriggerOperation, ok = spelled(s.TriggerOperation, triggerOperations); !ok {
		return fault.New(fault.BadRequest, "The triggerOperation %q of trigger %q is not valid; it must be one of %s", s.TriggerOperation, s.ID, strings.Join(triggerOperations, ", "))
	}
	return nil
}

// spelled finds v among allowed ignoring case and returns it as allowed spells it.
func spelled(v string, allowed []string) (string, bool) {
	for _, a := range allowed {
		if strings.EqualFold(v, a) {
			return a, true
		}
	}
	return v, false
}

// validate checks what a client gives of a script (normalize) and compiles its body, so that
// a syntax error is refused when the script is registered, as Cosmos does.
func (c *Container) validate(s *Script) error {
	if err := s.normalize(); err != nil {
		return err
	}
	return c.e.scripts.Check(s.Body)
}

// CreateScript adds a script to the container: Conflict when one of that kind has its id,
// Forbidden when the kind's quota is reached.
func (c *Container) CreateScript(s Script) (Script, error) {
	if err := c.validate(&s); err != nil {
		return Script{}, err
	}
	return freshWritten(c.e, func() (Script, error) {
		e := c.e
		e.mu.Lock()
		defer e.mu.Unlock()
		if err := c.live(); err != nil {
			return Script{}, err
		}
		k := scriptKinds[s.Kind]
		set := c.scripts.Load()
		if _, ok := set.byID[s.Kind][s.ID]; ok {
			return Script{}, fault.New(fault.Conflict, "A %s with id %q already exists in container %q", k.noun, s.ID, c.rec.ID)
		}
		if len(set.list[s.Kind]) >= k.quota {
			return Script{}, fault.New(fault.Forbidden, "The container %q has %d %ss, its quota; delete one before creating another", c.rec.ID, k.quota, k.noun)
		}
		rec := c.rec
		rec.NextScript++
		r := scriptRecord{Kind: s.Kind, ID: s.ID, Body: s.Body, TriggerType: s.TriggerType, TriggerOperation: s.TriggerOperation,
			Num: rec.NextScript, TS: now(), Version: e.nextVersion()}
		rec.Scripts = append(slices.Clip(rec.Scripts), r) // a new array: c.rec keeps its own until the write succeeds
		if err := c.saveScripts(rec); err != nil {
			return Script{}, err
		}
		return c.scriptOf(r), nil
	})
}

// ReplaceScript replaces the body (and, for a trigger, its type and operation) of the script
// of s's kind and id, when ifMatch is empty or its current etag.
func (c *Container) ReplaceScript(s Script, ifMatch string) (Script, error) {
	if err := c.validate(&s); err != nil {
		return Script{}, err
	}
	return freshWritten(c.e, func() (Script, error) {
		e := c.e
		e.mu.Lock()
		defer e.mu.Unlock()
		i, err := c.findScript(s.Kind, s.ID, ifMatch)
		if err != nil {
			return Script{}, err
		}
		rec := c.rec
		rec.Scripts = slices.Clone(rec.Scripts)
		r := &rec.Scripts[i]
		r.Body, r.TriggerType, r.TriggerOperation = s.Body, s.TriggerType, s.TriggerOperation
		r.TS, r.Version = now(), e.nextVersion()
		if err := c.saveScripts(rec); err != nil {
			return Script{}, err
		}
		return c.scriptOf(*r), nil
	})
}

// ReadScript returns the script of a kind with an id.
func (c *Container) ReadScript(kind ScriptKind, id string) (Script, error) {
	if err := kind.check(); err != nil {
		return Script{}, err
	}
	return c.script(kind, id)
}

// DeleteScript deletes the script of a kind with an id, when ifMatch is empty or its current
// etag.
func (c *Container) DeleteScript(kind ScriptKind, id, ifMatch string) error {
	if err := kind.check(); err != nil {
		return err
	}
	return c.e.freshWrite(func() error {
		e := c.e
		e.mu.Lock()
		defer e.mu.Unlock()
		i, err := c.findScript(kind, id, ifMatch)
		if err != nil {
			return err
		}
		rec := c.rec
		rec.Scripts = slices.Delete(slices.Clone(rec.Scripts), i, i+1)
		e.nextVersion() // the catalog changed; its version says so
		return c.saveScripts(rec)
	})
}

// Scripts lists the container's scripts of a kind in creation order.
func (c *Container) Scripts(kind ScriptKind) []Script {
	if kind >= numScriptKinds {
		return nil
	}
	return slices.Clone(c.scripts.Load().list[kind])
}

// script is the lookup the execution paths use: no lock, the set as of the last change; on a
// node of a cluster, a miss looks again once the node holds the catalog as of now (another
// node may have created the script a moment ago). Callers do not hold e.mu.
func (c *Container) script(kind ScriptKind, id string) (Script, error) {
	return missFresh(c.e, func() (Script, error) {
		if kind < numScriptKinds {
			if s, ok := c.scripts.Load().byID[kind][id]; ok {
				return s, nil
			}
		}
		return Script{}, scriptNotFound(kind, id)
	})
}

// findScript finds a script in c.rec for a change, checking ifMatch. Callers hold e.mu.
func (c *Container) findScript(kind ScriptKind, id, ifMatch string) (int, error) {
	if err := c.live(); err != nil {
		return 0, err
	}
	i := slices.IndexFunc(c.rec.Scripts, func(r scriptRecord) bool { return r.Kind == kind && r.ID == id })
	if i < 0 {
		return 0, scriptNotFound(kind, id)
	}
	if err := checkVersion(fmt.Sprintf("%s %q", scriptKinds[kind].noun, id), c.rec.Scripts[i].Version, ifMatch); err != nil {
		return 0, err
	}
	return i, nil
}

func scriptNotFound(kind ScriptKind, id string) error {
	return fault.New(fault.NotFound, "The %s %q does not exist", scriptKinds[kind].noun, id)
}

// live refuses a change to a container that was deleted since the caller looked it up.
// Callers hold e.mu.
func (c *Container) live() error {
	cur, err := c.e.container(c.db.rec.ID, c.rec.ID)
	if err != nil {
		return err
	}
	if cur != c {
		return fault.New(fault.NotFound, "Container %q does not exist in database %q", c.rec.ID, c.db.rec.ID)
	}
	return nil
}

// saveScripts writes the container's new record, synced, and publishes its scripts. Callers
// hold e.mu and have advanced the catalog version.
func (c *Container) saveScripts(rec containerRecord) error {
	if err := c.e.persist(catalog.Containers, rec.Num, rec); err != nil {
		return err
	}
	c.rec = rec
	c.scripts.Store(c.newScriptSet(rec.Scripts))
	return nil
}
