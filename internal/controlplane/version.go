package controlplane

import (
	"context"
	"strconv"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// versionKey holds the cluster's active version (package clusterversion), as a decimal; a
// cluster formed by a release that kept no version has none.
const versionKey = "/partita/cluster-version"

// ClusterVersion is the cluster's active version, 0 while none is recorded.
func (cp *ControlPlane) ClusterVersion(ctx context.Context) (uint32, error) {
	resp, err := cp.client.Get(ctx, versionKey)
	if err != nil || len(resp.Kvs) == 0 {
		return 0, err
	}
	v, err := strconv.ParseUint(string(resp.Kvs[0].Value), 10, 32)
	return uint32(v), err
}

// RaiseClusterVersion records to as the active version if from is recorded (0: none is), in
// one transaction, and reports whether it did. It refuses to lower the version.
func (cp *ControlPlane) RaiseClusterVersion(ctx context.Context, from, to uint32) (bool, error) {
	if to <= from {
		return false, nil
	}
	cmp := clientv3.Compare(clientv3.Value(versionKey), "=", strconv.FormatUint(uint64(from), 10))
	if from == 0 {
		cmp = clientv3.Compare(clientv3.CreateRevision(versionKey), "=", 0)
	}
	resp, err := cp.client.Txn(ctx).If(cmp).Then(clientv3.OpPut(versionKey, strconv.FormatUint(uint64(to), 10))).Commit()
	if err != nil {
		return false, err
	}
	return resp.Succeeded, nil
}
