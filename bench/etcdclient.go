package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// etcdClient runs the workloads' creates and reads against etcd (-mode etcd), the store
// Partita's control plane embeds, so that bench/cluster.sh can set a replicated write beside
// etcd's: a create (or upsert) is a put of the item under its own key, a read a get of one.
// Nothing else is an etcd operation. Keys are /bench/DB/CONTAINER/PK/ID.
type etcdClient struct {
	cli    *clientv3.Client
	prefix string
}

func newEtcdClient(endpoints string) (*etcdClient, error) {
	cli, err := clientv3.New(clientv3.Config{Endpoints: strings.Split(endpoints, ","), DialTimeout: 5 * time.Second})
	if err != nil {
		return nil, fmt.Errorf("etcd: %w", err)
	}
	return &etcdClient{cli: cli}, nil
}

var errNotEtcd = errors.New("not an etcd operation: -mode etcd runs create, upsert and read only")

func (c *etcdClient) Setup(ctx context.Context, db, container string, _ int, _ json.RawMessage, reset bool) error {
	c.prefix = "/bench/" + db + "/" + container + "/"
	if reset {
		_, err := c.cli.Delete(ctx, c.prefix, clientv3.WithPrefix())
		return err
	}
	_, err := c.cli.Get(ctx, c.prefix, clientv3.WithCountOnly()) // reachable
	return err
}

func (c *etcdClient) Create(ctx context.Context, pk string, body []byte) (Result, error) {
	var item struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(body, &item); err != nil {
		return Result{}, err
	}
	_, err := c.cli.Put(ctx, c.prefix+pk+"/"+item.ID, string(body))
	return Result{}, err
}

func (c *etcdClient) Upsert(ctx context.Context, pk string, body []byte) (Result, error) {
	return c.Create(ctx, pk, body)
}

func (c *etcdClient) Read(ctx context.Context, pk, id string) (Result, error) {
	r, err := c.cli.Get(ctx, c.prefix+pk+"/"+id)
	if err != nil {
		return Result{}, err
	}
	if len(r.Kvs) == 0 {
		return Result{}, fmt.Errorf("etcd: no key %s%s/%s", c.prefix, pk, id)
	}
	return Result{Body: r.Kvs[0].Value}, nil
}

func (c *etcdClient) Replace(context.Context, string, string, []byte, string) (Result, error) {
	return Result{}, errNotEtcd
}

func (c *etcdClient) Incr(context.Context, string, string) (Result, error) {
	return Result{}, errNotEtcd
}

func (c *etcdClient) Query(context.Context, string, string, map[string]any) (Result, error) {
	return Result{}, errNotEtcd
}

func (c *etcdClient) Throttled() int64 { return 0 }
