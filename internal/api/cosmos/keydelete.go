package cosmos

import "net/http"

// deletePartitionKey serves POST /dbs/{db}/colls/{c}/operations/partitionkeydelete, the
// service's delete by partition key: every item of the logical partition that the partition
// key header names is gone for reads at once and deleted in the background (package engine's
// keydelete.go). It answers 200 with no body, as the service does; the deletions in progress
// are listed in the container's partitions view.
func (c *call) deletePartitionKey() error {
	ct, err := c.container()
	if err != nil {
		return err
	}
	key, err := c.partitionKey(ct)
	if err != nil {
		return err
	}
	charge, err := ct.DeleteAllItemsByPartitionKey(c.r.Context(), key)
	c.charge = charge
	if err != nil {
		return err
	}
	c.reply(http.StatusOK, nil)
	return nil
}
