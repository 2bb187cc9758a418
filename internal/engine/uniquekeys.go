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

// sameUniqueKeys refuses, with BadRequest, a container replace whose uniqueKeyPolicy differs
// from the container's. Giving none, or the same keys (in any order), is fine: clients send
// back the properties they read. An empty list names a policy without keys: it is refused for
// a container that has some.
func (c *Container) sameUniqueKeys(raw json.RawMessage) error {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	pol, err := uniquekey.Parse(raw)
	if err != nil {
		return err
	}
	if !pol.Equal(c.unique) {
		return fault.New(fault.BadRequest, "The unique key policy of a container cannot be changed after it is created; create a new container with the new policy and copy the items over")
	}
	return nil
}
