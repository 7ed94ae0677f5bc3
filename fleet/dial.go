package fleet

import (
	"net"
	"time"
)

// dialer is the dialer for tests and Dial: a short timeout, so that a store
// that is down is found out quickly.
func dialer() net.Dialer { return net.Dialer{Timeout: time.Second, KeepAlive: 15 * time.Second} }
