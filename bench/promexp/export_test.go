package promexp

import "time"

// Uncache makes r's next scrape read its recorder (benchmarks).
func Uncache(r *Run) {
	r.mu.Lock()
	r.cachedAt = time.Time{}
	r.mu.Unlock()
}
