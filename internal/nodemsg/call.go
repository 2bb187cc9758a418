package nodemsg

import (
	"encoding/json"
	"fmt"

	"github.com/partita-db/partita/internal/clusterversion"
	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/nodecall"
)

// The calls between nodes (package nodecall) on the cluster transport. A node frames what it
// asks by the cluster's active version (Marshal), reads an answer in either framing
// (UnmarshalAnswer), and answers a request in the framing it came in (Serve).

// Marshal frames req as the nodes of a cluster at version v read it: typed from
// clusterversion.NodeMessages, the JSON of the earlier releases before. Its error wraps
// nodecall.ErrCodec.
func Marshal(req *nodecall.Request, v clusterversion.Version) ([]byte, error) {
	var b []byte
	var err error
	if v < clusterversion.NodeMessages {
		b, err = json.Marshal(req)
	} else {
		var m *Request
		if m, err = typedRequest(req); err == nil {
			b, err = Encode(m)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %v", nodecall.ErrCodec, err)
	}
	return b, nil
}

// UnmarshalAnswer reads a node's answer, in either framing: a node answers a typed request
// with JSON when its engine is not open yet (NotReady). Its error wraps nodecall.ErrCodec.
func UnmarshalAnswer(raw []byte) (nodecall.Answer, error) {
	ans := nodecall.Answer{Index: -1}
	var err error
	if !Typed(raw) {
		err = json.Unmarshal(raw, &ans)
	} else {
		var a *Answer
		if a, err = DecodeAnswer(raw); err == nil {
			ans, err = answerOf(a)
		}
	}
	if err != nil {
		return ans, fmt.Errorf("%w: %v", nodecall.ErrCodec, err)
	}
	return ans, nil
}

// Serve reads a request in either framing, has serve answer it, and frames the answer as the
// request was. A request that does not decode is answered with a BadRequest, never served.
func Serve(raw []byte, serve func(nodecall.Request) nodecall.Answer) []byte {
	if !Typed(raw) {
		var req nodecall.Request
		ans := nodecall.Failed(nil, false)
		if err := json.Unmarshal(raw, &req); err != nil {
			ans.Err = fault.New(fault.BadRequest, "A node-to-node request that does not decode: %v", err)
		} else {
			ans = serve(req)
		}
		b, err := json.Marshal(ans)
		if err != nil {
			b, _ = json.Marshal(nodecall.Failed(fault.New(fault.Internal, "%v", err), false))
		}
		return b
	}
	req, err := requestOf(raw)
	var ans nodecall.Answer
	if err != nil {
		ans = nodecall.Failed(fault.From(err), false)
	} else {
		ans = serve(req)
	}
	b, err := Encode(typedAnswer(&req, ans))
	if err != nil {
		b, _ = Encode(typedAnswer(&req, nodecall.Failed(fault.New(fault.Internal, "%v", err), false)))
	}
	return b
}

// NotReady is the answer of a node whose engine is not open yet: nothing was applied, and the
// request may be tried again, as from a replica without the lease. It is JSON, which a node
// of every release reads.
func NotReady() []byte {
	b, _ := json.Marshal(nodecall.Failed(fault.New(fault.Unavailable, "This replica does not hold the partition's lease; retry on its leader"), true)) // cannot fail
	return b
}
