package tlsconn

import (
	"fmt"
	"syscall"
)

// descriptorsBesides is what a run needs besides one descriptor per
// connection: standard streams, the poller, files, the odd probe.
const descriptorsBesides = 64

// CheckDescriptors reports, as an error to print before the load, when conns
// connections at once would not fit in the process's descriptor limit (one
// descriptor each; Go raises the soft limit to the hard one at start).
func CheckDescriptors(conns int) error {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return nil // nothing to say
	}
	need := uint64(conns) + descriptorsBesides
	if need <= lim.Cur {
		return nil
	}
	return &DescriptorLimitError{Conns: conns, Need: need, Cur: lim.Cur, Max: lim.Max}
}

// DescriptorLimitError is CheckDescriptors' error: Conns connections need
// about Need descriptors and the limit is Cur (hard limit Max).
type DescriptorLimitError struct {
	Conns          int
	Need, Cur, Max uint64
}

func (e *DescriptorLimitError) Error() string {
	return fmt.Sprintf("%d connections need about %d file descriptors and RLIMIT_NOFILE is %d (hard limit %d): "+
		"connections beyond it fail; "+
		"raise the hard limit (as root with CAP_SYS_RESOURCE) or split the load over agents",
		e.Conns, e.Need, e.Cur, e.Max)
}
