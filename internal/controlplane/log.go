package controlplane

import "go.uber.org/zap"

// quietLogger is the etcd client's logger: errors only, which the caller sees anyway.
func quietLogger() *zap.Logger {
	cfg := zap.NewProductionConfig()
	cfg.Level = zap.NewAtomicLevelAt(zap.ErrorLevel)
	l, err := cfg.Build()
	if err != nil {
		return zap.NewNop()
	}
	return l
}
