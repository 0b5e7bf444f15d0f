// Package soak holds the soak test (soak_test.go): the CPS engine against
// the reference target, both in the test's process, for a long time;
// goroutines, open file descriptors and RSS must stay flat. It runs only
// when asked: go test ./bench/internal/soak -run Soak -soak 5m (make soak).
package soak
