package cosmos

import "github.com/partita-db/partita/internal/status"

// Queries need the SQL engine, which this version of Partita does not have yet. They are
// refused plainly rather than answered wrongly.
func notYetQueries() error {
	return status.BadRequest("Partita does not run SQL queries yet; point reads, writes and read feeds work")
}

func (c *call) queryItems() error   { return notYetQueries() }
func (c *call) queryCatalog() error { return notYetQueries() }
func (c *call) queryOffers() error  { return notYetQueries() }
