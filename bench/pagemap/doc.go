// Command pagemap shows which of a running program's own executable
// pages are resident, by ELF section, by part of the Go pclntab and by
// Go package, to find where an idle process's file-backed RSS goes:
//
//	go run ./bench/pagemap -pid PID [-bin PATH] [-top 40]
//
// It reads /proc/PID/maps and /proc/PID/pagemap (root, or the process's
// own user with CAP_SYS_ADMIN, sees the present bits) and the binary's
// symbols (go tool nm). Linux maps up to 64 KB around each page a
// process faults in from the page cache, so a program that touches its
// code sparsely (package initialisation does) is shown resident far
// beyond what it ran; doc/benchmarks.md, "Memory (issue 36)".
package main
