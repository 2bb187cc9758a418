package cosmos

import (
	"net/http"

	"github.com/partita-db/partita/internal/engine"
	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/ru"
)

// offerJSON renders an offer as Cosmos does (offer version V2).
func offerJSON(o engine.OfferInfo) map[string]any {
	content := map[string]any{"offerIsRUPerMinuteThroughputEnabled": false}
	if o.Throughput.AutoscaleMax > 0 {
		content["offerThroughput"] = o.Throughput.AutoscaleMax / 10
		content["offerAutopilotSettings"] = map[string]any{"maxThroughput": o.Throughput.AutoscaleMax}
	} else {
		content["offerThroughput"] = o.Throughput.Manual
	}
	return map[string]any{
		"id": o.ID, "_rid": o.ID, "_self": "offers/" + o.ID + "/", "_etag": quoted(o.ETag()), "_ts": o.TS,
		"offerVersion": "V2", "offerType": "Invalid", "resource": o.ResourceSelf, "offerResourceId": o.ResourceRID,
		"content": content,
	}
}

func offersJSON(offers []engine.OfferInfo) []map[string]any {
	out := make([]map[string]any, len(offers))
	for i, o := range offers {
		out[i] = offerJSON(o)
	}
	return out
}

func (c *call) listOffers() error {
	list := offersJSON(c.h.engine.Offers())
	c.charge = ru.Catalog()
	return c.replyJSON(http.StatusOK, map[string]any{"_rid": "", "Offers": list, "_count": len(list)})
}

func (c *call) queryOffers() error { return c.querySlice("Offers", offersJSON(c.h.engine.Offers())) }

func (c *call) readOffer() error {
	o, err := c.h.engine.Offer(c.res.segs[1])
	if err != nil {
		return err
	}
	c.charge = ru.Catalog()
	return c.replyResource(http.StatusOK, o.ETag(), offerJSON(o))
}

// replaceOffer changes throughput: the body is the offer as read, with a new content. Its
// ids, when given, must be the offer's, and its resource the offer's resource.
func (c *call) replaceOffer() error {
	var body struct {
		ID              *string `json:"id"`
		RID             *string `json:"_rid"`
		Resource        string  `json:"resource"`
		OfferResourceID string  `json:"offerResourceId"`
		Content         *struct {
			OfferThroughput int `json:"offerThroughput"`
			Autopilot       *struct {
				MaxThroughput int `json:"maxThroughput"`
			} `json:"offerAutopilotSettings"`
		} `json:"content"`
	}
	if err := c.decodeJSON(&body); err != nil {
		return err
	}
	for _, id := range []*string{body.ID, body.RID} {
		if id != nil && *id != c.res.segs[1] {
			return fault.New(fault.BadRequest, "The offer id %q in the body does not match the offer %q in the path", *id, c.res.segs[1])
		}
	}
	if body.Content == nil {
		return fault.New(fault.BadRequest, "The offer needs a \"content\" with offerThroughput or offerAutopilotSettings")
	}
	r := engine.OfferReplace{Resource: body.Resource, ResourceRID: body.OfferResourceID, IfMatch: c.ifMatch()}
	if a := body.Content.Autopilot; a != nil && a.MaxThroughput != 0 {
		r.Throughput.AutoscaleMax = a.MaxThroughput
	} else {
		r.Throughput.Manual = body.Content.OfferThroughput
	}
	o, err := c.h.engine.ReplaceOffer(c.res.segs[1], r)
	if err != nil {
		return err
	}
	c.charge = ru.CatalogWrite()
	return c.replyResource(http.StatusOK, o.ETag(), offerJSON(o))
}
