package fleet

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	if os.Getenv("FLEET_CHILD") != "" { // a child process of TestFleetOfProcesses
		childMain()
		os.Exit(0)
	}
	goleak.VerifyTestMain(m)
}
