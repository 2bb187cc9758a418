package cosmos

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"

	"github.com/partita-db/partita/internal/engine"
	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/rid"
	"github.com/partita-db/partita/internal/ru"
)

// A container's stored procedures, triggers and user-defined functions: dbs/{db}/colls/{coll}/
// sprocs|triggers|udfs[/{id}], and the execution of a stored procedure (POST on its path).

var scriptKinds = []engine.ScriptKind{engine.ProcedureScript, engine.TriggerScript, engine.FunctionScript}

// scriptLists names each kind's list in feeds, as Cosmos does.
var scriptLists = map[engine.ScriptKind]string{
	engine.ProcedureScript: "StoredProcedures", engine.TriggerScript: "Triggers", engine.FunctionScript: "UserDefinedFunctions",
}

// scriptKind is the kind the path names (dispatch routes only the three kinds' paths here).
func (c *call) scriptKind() engine.ScriptKind {
	for _, k := range scriptKinds {
		if k.String() == c.res.segs[4] {
			return k
		}
	}
	return engine.ProcedureScript
}

func scriptJSON(s engine.Script) map[string]any {
	out := map[string]any{"id": s.ID, "body": s.Body, "_rid": s.RID, "_self": s.Self, "_etag": quoted(s.ETag), "_ts": s.TS}
	if s.Kind == engine.TriggerScript {
		out["triggerType"], out["triggerOperation"] = s.TriggerType, s.TriggerOperation
	}
	return out
}

// readScriptBody reads the body of a create or replace; system properties are ignored.
func (c *call) readScriptBody() (engine.Script, error) {
	var b struct {
		ID               string          `json:"id"`
		Body             json.RawMessage `json:"body"`
		TriggerType      string          `json:"triggerType"`
		TriggerOperation string          `json:"triggerOperation"`
	}
	if err := c.decodeJSON(&b); err != nil {
		return engine.Script{}, err
	}
	s := engine.Script{Kind: c.scriptKind(), ID: b.ID, TriggerType: b.TriggerType, TriggerOperation: b.TriggerOperation}
	if err := json.Unmarshal(b.Body, &s.Body); err != nil {
		return s, fault.New(fault.BadRequest, "The \"body\" of %s %q must be a string of JavaScript", s.Kind, b.ID)
	}
	return s, nil
}

// scriptReply writes one script.
func (c *call) scriptReply(code int, s engine.Script) error {
	return c.replyResource(code, s.ETag, scriptJSON(s))
}

func (c *call) createScript() error {
	ct, err := c.container()
	if err != nil {
		return err
	}
	s, err := c.readScriptBody()
	if err != nil {
		return err
	}
	if s, err = ct.CreateScript(s); err != nil {
		return err
	}
	c.charge = ru.CatalogWrite()
	return c.scriptReply(http.StatusCreated, s)
}

func (c *call) readScript() error {
	ct, err := c.container()
	if err != nil {
		return err
	}
	s, err := ct.ReadScript(c.scriptKind(), c.res.segs[5])
	if err != nil {
		return err
	}
	c.charge = ru.Catalog()
	return c.scriptReply(http.StatusOK, s)
}

// replaceScript replaces a script whole. The body's id must be the path's: the engine keeps a
// script under its id, and the SDKs always send the one they address.
func (c *call) replaceScript() error {
	ct, err := c.container()
	if err != nil {
		return err
	}
	s, err := c.readScriptBody()
	if err != nil {
		return err
	}
	if s.ID != c.res.segs[5] {
		return fault.New(fault.BadRequest, "The id %q in the body does not match the %s %q in the path", s.ID, s.Kind, c.res.segs[5])
	}
	if s, err = ct.ReplaceScript(s, c.ifMatch()); err != nil {
		return err
	}
	c.charge = ru.CatalogWrite()
	return c.scriptReply(http.StatusOK, s)
}

func (c *call) deleteScript() error {
	ct, err := c.container()
	if err != nil {
		return err
	}
	if err := ct.DeleteScript(c.scriptKind(), c.res.segs[5], c.ifMatch()); err != nil {
		return err
	}
	c.charge = ru.CatalogWrite()
	c.reply(http.StatusNoContent, nil)
	return nil
}

// scriptResources are a container's scripts of the path's kind as JSON, in creation order.
func (c *call) scriptResources() (*engine.Container, []engine.Script, error) {
	ct, err := c.container()
	if err != nil {
		return nil, nil, err
	}
	return ct, ct.Scripts(c.scriptKind()), nil
}

// listScripts answers the feed of a kind in creation order, as Cosmos lists them. Pages are
// cut by rid, which grows with creation (rid.Child), so a continuation survives deletes.
func (c *call) listScripts() error {
	ct, list, err := c.scriptResources()
	if err != nil {
		return err
	}
	lo, hi, err := c.page(len(list), func(i int) string { b, _ := rid.Decode(list[i].RID); return string(b) })
	if err != nil {
		return err
	}
	out := []map[string]any{}
	for _, s := range list[lo:hi] {
		out = append(out, scriptJSON(s))
	}
	c.charge = ru.Catalog()
	return c.replyJSON(http.StatusOK, map[string]any{"_rid": ct.RID(), scriptLists[c.scriptKind()]: out, "_count": len(out)})
}

func (c *call) queryScripts() error {
	_, list, err := c.scriptResources()
	if err != nil {
		return err
	}
	docs := make([]map[string]any, len(list))
	for i, s := range list {
		docs[i] = scriptJSON(s)
	}
	return c.querySlice(scriptLists[c.scriptKind()], docs)
}

// executeProcedure runs a stored procedure. The body is the JSON array of its arguments (the
// JavaScript SDK sends none when there are none). The answer's body is what the procedure
// set with getResponse().setBody, as JSON, or empty when it set nothing: the JavaScript SDK
// reads an empty body as a null result. The log, when asked for, is percent-encoded as Cosmos
// sends it (.NET reads it with Uri.UnescapeDataString; the JavaScript SDK hands the header
// over as it is).
func (c *call) executeProcedure() error {
	ct, err := c.container()
	if err != nil {
		return err
	}
	body, err := c.body()
	if err != nil {
		return err
	}
	args := bytes.TrimSpace(body)
	if len(args) == 0 {
		args = []byte("[]")
	}
	if args[0] != '[' || !json.Valid(args) {
		return fault.New(fault.BadRequest, "The arguments of stored procedure %q must be a JSON array, such as [\"a\", 1]", c.res.segs[5])
	}
	key, err := c.partitionKey(ct)
	if err != nil {
		return err
	}
	logging := isTrue(c.r.Header.Get("X-Ms-Documentdb-Script-Enable-Logging"))
	r, err := ct.ExecuteProcedure(c.res.segs[5], args, engine.ProcedureOptions{PartitionKey: key, Log: logging, Headers: c.scriptHeaders(), Context: c.ctx})
	c.charge = r.Charge
	if logging { // also when the script failed: its log may say why
		c.set("x-ms-documentdb-script-log-results", url.PathEscape(r.Log))
	}
	if err != nil {
		return err
	}
	c.set("x-ms-session-token", c.sessionToken(r.PartitionID, r.LSN))
	c.setLSNs(r.LSN, 0)
	c.set("x-ms-content-path", ct.RID())
	c.reply(http.StatusOK, r.Body)
	return nil
}
