package cosmos

import "github.com/partita-db/partita/internal/status"

// Offers (provisioned throughput as a resource) arrive with the partition lifecycle work; the
// SDKs find offers by query, so they also need the SQL engine.
func (c *call) listOffers() error   { return notYetOffers() }
func (c *call) readOffer() error    { return notYetOffers() }
func (c *call) replaceOffer() error { return notYetOffers() }

func notYetOffers() error {
	return status.BadRequest("Offers (reading and replacing throughput) are not supported by this version of Partita")
}
