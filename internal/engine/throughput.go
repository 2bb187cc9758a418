package engine

import "github.com/partita-db/partita/internal/fault"

// Throughput is provisioned request units per second: manual, or autoscale between 10% and
// 100% of a maximum. Exactly one of the fields is set.
type Throughput struct {
	Manual       int `json:"manual,omitempty"`
	AutoscaleMax int `json:"autoscaleMax,omitempty"`
}

// Cosmos's rules for provisioned throughput.
const (
	MinManual            = 400
	MinAutoscaleMax      = 1000
	DefaultThroughput    = 400   // a container created with no throughput and no shared database throughput
	ManualPerPartition   = 6000  // RU/s per partition when a container is created with manual throughput
	MaxRUPerPartition    = 10000 // RU/s a physical partition can serve
	manualIncrement      = 100
	autoscaleIncremement = 1000
)

// MaxThroughput is the most a container or database may provision (Cosmos's default quota,
// raised there only by a support ticket). Without a bound, a raise to billions of RU/s would
// split a container into hundreds of thousands of partitions before answering.
const MaxThroughput = 1000000

func (t Throughput) validate() error {
	switch {
	case t.Manual != 0 && t.AutoscaleMax != 0:
		return fault.New(fault.BadRequest, "Give either manual throughput or an autoscale maximum, not both")
	case t.Manual != 0 && t.Manual < MinManual:
		return fault.New(fault.BadRequest, "The offer throughput %d RU/s is below the minimum of %d RU/s", t.Manual, MinManual)
	case t.Manual%manualIncrement != 0:
		return fault.New(fault.BadRequest, "The offer throughput must be a multiple of %d RU/s; got %d", manualIncrement, t.Manual)
	case t.AutoscaleMax != 0 && t.AutoscaleMax < MinAutoscaleMax:
		return fault.New(fault.BadRequest, "The autoscale maximum %d RU/s is below the minimum of %d RU/s", t.AutoscaleMax, MinAutoscaleMax)
	case t.AutoscaleMax%autoscaleIncremement != 0:
		return fault.New(fault.BadRequest, "The autoscale maximum must be a multiple of %d RU/s; got %d", autoscaleIncremement, t.AutoscaleMax)
	case t.Manual < 0 || t.AutoscaleMax < 0:
		return fault.New(fault.BadRequest, "Throughput must be positive")
	case t.Manual > MaxThroughput || t.AutoscaleMax > MaxThroughput:
		return fault.New(fault.BadRequest, "The throughput %d RU/s is above the maximum of %d RU/s a container or database may provision",
			max(t.Manual, t.AutoscaleMax), MaxThroughput)
	}
	return nil
}

// IsZero reports whether no throughput is set.
func (t Throughput) IsZero() bool { return t.Manual == 0 && t.AutoscaleMax == 0 }

// initialPartitions is how many physical partitions Cosmos gives a container at creation:
// about one per 6,000 RU/s of manual throughput, one per 10,000 RU/s of an autoscale maximum
// or of shared database throughput, and at least one.
func initialPartitions(own, shared Throughput) int {
	ceil := func(a, b int) int { return (a + b - 1) / b }
	n := 1
	switch {
	case own.Manual != 0:
		n = ceil(own.Manual, ManualPerPartition)
	case own.AutoscaleMax != 0:
		n = ceil(own.AutoscaleMax, MaxRUPerPartition)
	case shared.Manual != 0:
		n = ceil(shared.Manual, MaxRUPerPartition)
	case shared.AutoscaleMax != 0:
		n = ceil(shared.AutoscaleMax, MaxRUPerPartition)
	}
	return max(n, 1)
}
