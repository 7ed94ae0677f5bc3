//go:build !linux

package proc

import "syscall"

// procAttr: no parent-death signal outside Linux; StopAll still stops the
// children on every exit path the harness controls.
func procAttr() *syscall.SysProcAttr { return nil }
