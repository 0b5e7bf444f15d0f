// Package agent runs engine runs as synchronized agents: manifests for
// Kubernetes, the collector agents push their records to, and executors for
// the method.
package agent
