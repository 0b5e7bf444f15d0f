//go:build !race

package http3_test

// raceDetector: the test binary runs under the race detector.
const raceDetector = false
