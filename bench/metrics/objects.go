package metrics

import (
	"fmt"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/tlsbench/tlsbench/bench/vocab"
)

// ObjectHists are an object's histograms as the record keeps them (V2
// compressed, base64), from which Merge recomputes its percentiles
// exactly; ObjectStats embeds them.
type ObjectHists struct {
	TTFBHist string `json:"ttfb_hist,omitempty"`
	TTLBHist string `json:"ttlb_hist,omitempty"`
}

// objectSnap is one object's share of a steady window (a Snapshot's).
type objectSnap struct {
	OK, Errors, Payload int64
	TTFB, TTLB          *hdr.Histogram
}

// ObjectCounts returns, per object (index: Sample.Object − 1), the
// window's successful transactions that drew it; nil without objects.
func (s *Snapshot) ObjectCounts() []int64 {
	if len(s.objects) == 0 {
		return nil
	}
	n := make([]int64, len(s.objects))
	for i := range s.objects {
		n[i] = s.objects[i].OK
	}
	return n
}

// recordRFC records a window's sample's object and RFC 9411 timings.
func (sh *shard) recordRFC(s *Sample) {
	ok := s.Class == ""
	if ok && s.RFCTTFB > 0 {
		if sh.rfc[0] == nil {
			sh.rfc[0], sh.rfc[1] = NewHistogram(), NewHistogram()
		}
		sh.record(sh.rfc[0], s.RFCTTFB)
		if s.RFCTTLB > 0 {
			sh.record(sh.rfc[1], s.RFCTTLB)
		}
	}
	if s.Object == 0 {
		return
	}
	i := int(s.Object) - 1
	for len(sh.objects) <= i {
		sh.objects = append(sh.objects, objectSnap{TTFB: NewHistogram(), TTLB: NewHistogram()})
	}
	o := &sh.objects[i]
	if !ok {
		o.Errors++
		return
	}
	o.OK++
	o.Payload += s.Payload
	if s.RFCTTFB > 0 {
		sh.record(o.TTFB, s.RFCTTFB)
	}
	if s.RFCTTLB > 0 {
		sh.record(o.TTLB, s.RFCTTLB)
	}
}

// mergeObjects adds a shard's objects and RFC histograms to s's.
func (s *Snapshot) mergeObjects(o *Snapshot) {
	for k, h := range o.rfc {
		mergeLazy(&s.rfc[k], h)
	}
	for len(s.objects) < len(o.objects) {
		s.objects = append(s.objects, objectSnap{TTFB: NewHistogram(), TTLB: NewHistogram()})
	}
	for i := range o.objects {
		a, b := &s.objects[i], &o.objects[i]
		a.OK += b.OK
		a.Errors += b.Errors
		a.Payload += b.Payload
		a.TTFB.Merge(b.TTFB)
		a.TTLB.Merge(b.TTLB)
	}
}

// SetRFC9411 sets the record's rfc9411_ttfb and rfc9411_ttlb latency
// entries from the window's snapshot (Fill's), when its transactions had
// them; a run without them keeps its record as before.
func (r *Run) SetRFC9411(s Snapshot) error {
	if s.rfc[0] == nil {
		return nil
	}
	if err := r.SetHistogram(vocab.PhaseRFCTTFB, s.rfc[0]); err != nil {
		return err
	}
	return r.SetHistogram(vocab.PhaseRFCTTLB, s.rfc[1])
}

// SetObjects sets the record's Objects: objs as asked (size, path,
// weight) with each one's share of the window's snapshot s (Fill's).
func (r *Run) SetObjects(objs []ObjectStats, s Snapshot) error {
	if len(objs) == 0 {
		r.Objects = nil
		return nil
	}
	if len(s.objects) > len(objs) {
		return fmt.Errorf("metrics: %d objects drawn, %d asked for", len(s.objects), len(objs))
	}
	r.Objects = make([]ObjectStats, len(objs))
	for i, o := range objs {
		var snap objectSnap
		if i < len(s.objects) {
			snap = s.objects[i]
		} else {
			snap = objectSnap{TTFB: NewHistogram(), TTLB: NewHistogram()}
		}
		o.Transactions, o.Errors, o.Payload = snap.OK, snap.Errors, snap.Payload
		if err := o.setHists(snap.TTFB, snap.TTLB); err != nil {
			return err
		}
		r.Objects[i] = o
	}
	return nil
}

// setHists sets the object's percentiles and encoded histograms.
func (o *ObjectStats) setHists(ttfb, ttlb *hdr.Histogram) (err error) {
	if o.TTFB, o.TTFBHist, err = summarizeEncoded("object ttfb", ttfb); err != nil {
		return err
	}
	o.TTLB, o.TTLBHist, err = summarizeEncoded("object ttlb", ttlb)
	return err
}

// hists decodes the object's histograms (empty ones when the record has
// none).
func (o *ObjectStats) hists() (ttfb, ttlb *hdr.Histogram, err error) {
	dec := func(enc string) (*hdr.Histogram, error) {
		if enc == "" {
			return NewHistogram(), nil
		}
		return hdr.Decode([]byte(enc))
	}
	if ttfb, err = dec(o.TTFBHist); err != nil {
		return nil, nil, err
	}
	ttlb, err = dec(o.TTLBHist)
	return ttfb, ttlb, err
}

// mergeLatency sets m's latency, histograms and objects from the agents'
// (Merge).
func (m *Run) mergeLatency(ins []*mergeInput) (err error) {
	if m.Latency, m.Histograms, err = mergeHistograms(ins); err != nil {
		return err
	}
	m.Objects, err = mergeObjects(ins)
	return err
}

// mergeObjects adds the agents' objects (same mix: same sizes, in the same
// order) into m, their histograms merged and percentiles recomputed.
func mergeObjects(ins []*mergeInput) ([]ObjectStats, error) {
	var out []ObjectStats
	var ttfb, ttlb []*hdr.Histogram
	for k, in := range ins {
		r := in.r
		if k > 0 && len(r.Objects) != len(out) {
			return nil, fmt.Errorf("metrics: agents' object mixes differ (%d and %d objects)", len(out),
				len(r.Objects))
		}
		for i, o := range r.Objects {
			a, b, err := o.hists()
			if err != nil {
				return nil, fmt.Errorf("metrics: object %d: %w", i, err)
			}
			if k == 0 {
				out = append(out, ObjectStats{Size: o.Size, Path: o.Path, Weight: o.Weight})
				ttfb, ttlb = append(ttfb, NewHistogram()), append(ttlb, NewHistogram())
			}
			if out[i].Size != o.Size || out[i].Path != o.Path {
				return nil, fmt.Errorf("metrics: agents' object %d differ (%d bytes at %s, %d at %s)", i,
					out[i].Size, out[i].Path, o.Size, o.Path)
			}
			out[i].Transactions += o.Transactions
			out[i].Errors += o.Errors
			out[i].Payload += o.Payload
			ttfb[i].Merge(a)
			ttlb[i].Merge(b)
		}
	}
	for i := range out {
		if err := out[i].setHists(ttfb[i], ttlb[i]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// checkObjects checks the objects against the record's counts.
func (r *Run) checkObjects(c *Checker) {
	var sum int64
	for i, o := range r.Objects {
		p := fmt.Sprintf("objects[%d]", i)
		c.nums(p+".", []num{{"size", o.Size}, {"weight", o.Weight}, {"transactions", o.Transactions},
			{"errors", o.Errors}, {"payload_bytes", o.Payload}})
		checkPercentiles(c, p+".ttfb_us", o.TTFB)
		checkPercentiles(c, p+".ttlb_us", o.TTLB)
		ttfb, ttlb, err := o.hists()
		if err != nil {
			c.Failf(p, "a histogram is not an HdrHistogram: %v", err)
			return
		}
		if ttfb.TotalCount() != o.TTFB.Count || ttlb.TotalCount() != o.TTLB.Count {
			c.Failf(p, "histograms count %d and %d values, percentiles %d and %d", ttfb.TotalCount(),
				ttlb.TotalCount(), o.TTFB.Count, o.TTLB.Count)
		}
		if o.TTLB.Count > o.Transactions {
			c.Failf(p+".ttlb_us.count", "%d, more than the object's %d transactions", o.TTLB.Count, o.Transactions)
		}
		sum += o.Transactions
	}
	if sum > r.Transactions {
		c.Failf("objects", "%d transactions in all, more than the record's %d", sum, r.Transactions)
	}
}
