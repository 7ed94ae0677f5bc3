//go:build !linux

package main

import "syscall"

// procAttr: no parent-death signal outside Linux; stopAll still stops the
// children on every exit path the harness controls.
func procAttr() *syscall.SysProcAttr { return nil }
