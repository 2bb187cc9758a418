package cosmos

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/partita-db/partita/internal/engine"
)

// A delete made by time to live says so in the all-versions feed's metadata; a client's does not.
func TestVersionRecordMarksExpiry(t *testing.T) {
	for _, expired := range []bool{false, true} {
		rec := versionRecord(engine.FeedChange{LSN: 9, Op: engine.ChangeDelete, ID: "a", PrevLSN: 3, Expired: expired}, []string{"/pk"})
		var v struct {
			Metadata struct {
				OperationType     string `json:"operationType"`
				TimeToLiveExpired bool   `json:"timeToLiveExpired"`
			} `json:"metadata"`
		}
		if err := json.Unmarshal(rec, &v); err != nil {
			t.Fatalf("%s: %v", rec, err)
		}
		if v.Metadata.OperationType != "delete" || v.Metadata.TimeToLiveExpired != expired {
			t.Fatalf("expired %v: %s", expired, rec)
		}
	}
}

// The container's JSON carries defaultTtl only when time to live is set.
func TestContainerJSONDefaultTTL(t *testing.T) {
	if _, ok := containerJSON(engine.ContainerInfo{})["defaultTtl"]; ok {
		t.Fatal("defaultTtl shown for a container without time to live")
	}
	d := int64(-1)
	b, _ := json.Marshal(containerJSON(engine.ContainerInfo{DefaultTTL: &d}))
	if !strings.Contains(string(b), `"defaultTtl":-1`) {
		t.Fatalf("container JSON %s", b)
	}
}
