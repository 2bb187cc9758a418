package engine

import (
	"encoding/json"

	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/uniquekey"
)

// A container's unique key policy is set at creation and never changes: adding a key would
// need a check of every item already written, and Cosmos refuses it too. The partitions
// enforce it (partition/unique.go); the engine only validates, records and reports it.

// uniqueKeysRecord validates a create request's uniqueKeyPolicy and returns what the catalog
// records: the policy re-encoded, or nil when it declares no key.
func uniqueKeysRecord(raw json.RawMessage) (json.RawMessage, error) {
	pol, err := uniquekey.Parse(raw)
	if err != nil || pol == nil {
		return nil, err
	}
	return pol.JSON(), nil
}

// CheckUniqueKeys refuses, with BadRequest, a container replace whose uniqueKeyPolicy differs
// from the container's. Giving none, or the same keys (in any order), is fine: clients send
// back the properties they read. An empty list names a policy without keys: it is refused for
// a container that has some. ReplaceContainer itself never changes the policy, so the
// check may run before it without a lock between the two.
func (e *Engine) CheckUniqueKeys(dbID, id string, raw json.RawMessage) error {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	pol, err := uniquekey.Parse(raw)
	if err != nil {
		return err
	}
	e.mu.RLock()
	defer e.mu.RUnlock()
	c, err := e.container(dbID, id)
	if err != nil {
		return err
	}
	if !pol.Equal(c.unique) {
		return fault.New(fault.BadRequest, "The unique key policy of a container cannot be changed after it is created; create a new container with the new policy and copy the items over")
	}
	return nil
}
