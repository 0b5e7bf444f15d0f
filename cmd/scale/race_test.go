//go:build race

package main

// raceEnabled: the generators are this test binary, instrumented, so their
// memory says nothing about the engines'.
const raceEnabled = true
