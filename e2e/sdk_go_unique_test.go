package e2e

import (
	"net/http"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
)

// A container with a unique key policy, through the Go SDK: the policy comes back as given,
// duplicates within a logical partition get 409 (alone or in a batch), other logical
// partitions may reuse a value, and the policy cannot be changed by a replace.
func TestGoSDKUniqueKeys(t *testing.T) {
	s := startServer(t, false)
	c := s.sdk(t)
	ctx := ctx(t)
	if _, err := c.CreateDatabase(ctx, azcosmos.DatabaseProperties{ID: "crm"}, nil); err != nil {
		t.Fatal(err)
	}
	db, _ := c.NewDatabase("crm")
	pkDef := azcosmos.PartitionKeyDefinition{Paths: []string{"/company"}, Version: 2}
	_, err := db.CreateContainer(ctx, azcosmos.ContainerProperties{ID: "bad", PartitionKeyDefinition: pkDef,
		UniqueKeyPolicy: &azcosmos.UniqueKeyPolicy{UniqueKeys: []azcosmos.UniqueKey{{Paths: []string{"/email/*"}}}}}, nil)
	if statusOf(err) != http.StatusBadRequest {
		t.Fatalf("create with a wildcard unique key path: %v, want 400", err)
	}
	policy := &azcosmos.UniqueKeyPolicy{UniqueKeys: []azcosmos.UniqueKey{
		{Paths: []string{"/email"}},
		{Paths: []string{"/first", "/last"}},
	}}
	created, err := db.CreateContainer(ctx, azcosmos.ContainerProperties{ID: "users", PartitionKeyDefinition: pkDef, UniqueKeyPolicy: policy}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := created.ContainerProperties.UniqueKeyPolicy; got == nil || len(got.UniqueKeys) != 2 || len(got.UniqueKeys[1].Paths) != 2 || got.UniqueKeys[1].Paths[1] != "/last" {
		t.Fatalf("created container's unique key policy: %+v", got)
	}
	users, _ := db.NewContainer("users")
	contoso := azcosmos.NewPartitionKeyString("contoso")
	if _, err := users.CreateItem(ctx, contoso, []byte(`{"id":"1","company":"contoso","email":"gaby@contoso.com","first":"Gaby","last":"Duperre"}`), nil); err != nil {
		t.Fatal(err)
	}
	_, err = users.CreateItem(ctx, contoso, []byte(`{"id":"2","company":"contoso","email":"gaby@contoso.com","first":"Ivan","last":"Duperre"}`), nil)
	if statusOf(err) != http.StatusConflict {
		t.Fatalf("duplicate email: %v, want 409", err)
	}
	_, err = users.UpsertItem(ctx, contoso, []byte(`{"id":"2","company":"contoso","email":"ivan@contoso.com","first":"Gaby","last":"Duperre"}`), nil)
	if statusOf(err) != http.StatusConflict {
		t.Fatalf("duplicate name: %v, want 409", err)
	}
	if _, err := users.CreateItem(ctx, contoso, []byte(`{"id":"2","company":"contoso","email":"ivan@contoso.com","first":"Ivan","last":"Duperre"}`), nil); err != nil {
		t.Fatal(err)
	}
	_, err = users.ReplaceItem(ctx, contoso, "2", []byte(`{"id":"2","company":"contoso","email":"gaby@contoso.com","first":"Ivan","last":"Duperre"}`), nil)
	if statusOf(err) != http.StatusConflict {
		t.Fatalf("replace onto another item's email: %v, want 409", err)
	}
	patch := azcosmos.PatchOperations{}
	patch.AppendSet("/first", "Gaby")
	if _, err := users.PatchItem(ctx, contoso, "2", patch, nil); statusOf(err) != http.StatusConflict {
		t.Fatalf("patch onto another item's name: %v, want 409", err)
	}
	fabrikam := azcosmos.NewPartitionKeyString("fabrikam")
	if _, err := users.CreateItem(ctx, fabrikam, []byte(`{"id":"1","company":"fabrikam","email":"gaby@contoso.com","first":"Gaby","last":"Duperre"}`), nil); err != nil {
		t.Fatalf("the same values in another logical partition: %v", err)
	}

	batch := users.NewTransactionalBatch(contoso)
	batch.CreateItem([]byte(`{"id":"3","company":"contoso","email":"new@contoso.com","first":"A","last":"B"}`), nil)
	batch.CreateItem([]byte(`{"id":"4","company":"contoso","email":"new@contoso.com","first":"C","last":"D"}`), nil)
	resp, err := users.ExecuteTransactionalBatch(ctx, batch, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Success || resp.OperationResults[0].StatusCode != 424 || resp.OperationResults[1].StatusCode != http.StatusConflict {
		t.Fatalf("batch with a duplicate: success %v, results %+v", resp.Success, resp.OperationResults)
	}
	if _, err := users.ReadItem(ctx, contoso, "3", nil); statusOf(err) != http.StatusNotFound {
		t.Fatalf("a failed batch left item 3: %v", err)
	}

	// Replacing the container with what was read keeps the policy; changing it is refused.
	read, err := users.Read(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	props := *read.ContainerProperties
	if _, err := users.Replace(ctx, props, nil); err != nil {
		t.Fatalf("replace with the same policy: %v", err)
	}
	props.UniqueKeyPolicy = &azcosmos.UniqueKeyPolicy{UniqueKeys: []azcosmos.UniqueKey{{Paths: []string{"/email"}}}}
	if _, err := users.Replace(ctx, props, nil); statusOf(err) != http.StatusBadRequest {
		t.Fatalf("replace with another policy: %v, want 400", err)
	}

	// A container without a policy reports an empty one, as Cosmos does, and replaces fine.
	if _, err := db.CreateContainer(ctx, azcosmos.ContainerProperties{ID: "plain", PartitionKeyDefinition: pkDef}, nil); err != nil {
		t.Fatal(err)
	}
	plain, _ := db.NewContainer("plain")
	pr, err := plain.Read(ctx, nil)
	if err != nil || pr.ContainerProperties.UniqueKeyPolicy == nil || len(pr.ContainerProperties.UniqueKeyPolicy.UniqueKeys) != 0 {
		t.Fatalf("plain container's policy: %+v %v", pr.ContainerProperties, err)
	}
	if _, err := plain.Replace(ctx, *pr.ContainerProperties, nil); err != nil {
		t.Fatalf("replace of a container without unique keys: %v", err)
	}
}
