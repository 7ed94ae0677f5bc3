package proc

import "syscall"

// procAttr makes a child die with the harness, even when the harness is
// killed before it can stop it.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
