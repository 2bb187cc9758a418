package cosmos

import (
	"strconv"

	"github.com/partita-db/partita/internal/engine"
)

// setIndexProgress writes how far the index rebuild after a policy change has come, on a
// container read that asks for quota information (x-ms-documentdb-populatequotainfo: true) as
// Cosmos does: the percentage of items that follow the current policy, 100 when nothing is in
// flight. Partita has no lazy indexing (a "lazy" policy indexes consistently), so the lazy
// indexing progress header is not sent.
func (c *call) setIndexProgress(info engine.ContainerInfo) {
	if !isTrue(c.r.Header.Get("X-Ms-Documentdb-Populatequotainfo")) {
		return
	}
	c.set("x-ms-documentdb-collection-index-transformation-progress", strconv.Itoa(info.IndexProgress))
}
