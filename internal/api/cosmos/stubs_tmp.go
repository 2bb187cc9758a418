package cosmos

import "github.com/partita-db/partita/internal/status"

func (c *call) batch() error      { return status.BadRequest("batch: not yet") }
func (c *call) patchItem() error  { return status.BadRequest("patch: not yet") }
func (c *call) listOffers() error { return status.BadRequest("offers: not yet") }
func (c *call) readOffer() error  { return status.BadRequest("offers: not yet") }
func (c *call) replaceOffer() error {
	return status.BadRequest("offers: not yet")
}
