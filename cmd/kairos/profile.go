package main

import (
	"fmt"
	"net"
	"net/http"
	httppprof "net/http/pprof"
	"os"
	"runtime/pprof"
	"strings"
)

// profiling reads KAIROS_CPU_PROFILE and KAIROS_PPROF (doc/config.md).
type profiling struct {
	// CPUFile receives a CPU profile of the whole process lifetime
	// (written when the process exits cleanly, e.g. on SIGTERM).
	CPUFile string
	// Endpoints serves net/http/pprof under /debug/pprof/ on the admin
	// listener, which must then be a loopback address.
	Endpoints bool
}

func loadProfiling(getenv func(string) string, httpAddr string) (profiling, error) {
	p := profiling{CPUFile: strings.TrimSpace(getenv("KAIROS_CPU_PROFILE"))}
	switch v := strings.ToLower(strings.TrimSpace(getenv("KAIROS_PPROF"))); v {
	case "", "off":
	case "on":
		p.Endpoints = true
		if !loopback(httpAddr) {
			return p, usagef("KAIROS_PPROF=on needs KAIROS_HTTP_ADDR on a loopback address (127.0.0.1, ::1 or localhost), not %q: profiles show the process's memory", httpAddr)
		}
	default:
		return p, usagef("KAIROS_PPROF must be on or off, not %q", v)
	}
	return p, nil
}

// loopback reports whether a listen address binds only the loopback
// interface.
func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// startCPUProfile starts the CPU profile of KAIROS_CPU_PROFILE; it is
// written when Main closes.
func (m *Main) startCPUProfile() error {
	if m.Config.Profiling.CPUFile == "" {
		return nil
	}
	f, err := os.Create(m.Config.Profiling.CPUFile)
	if err != nil {
		return usagef("KAIROS_CPU_PROFILE: %v", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return fmt.Errorf("start CPU profile: %w", err)
	}
	m.onClose(func() error {
		pprof.StopCPUProfile()
		return f.Close()
	})
	return nil
}

// servePprof adds net/http/pprof's handlers to the admin mux when
// KAIROS_PPROF=on.
func (m *Main) servePprof(mux *http.ServeMux) {
	if !m.Config.Profiling.Endpoints {
		return
	}
	mux.HandleFunc("GET /debug/pprof/", httppprof.Index)
	mux.HandleFunc("GET /debug/pprof/cmdline", httppprof.Cmdline)
	mux.HandleFunc("GET /debug/pprof/profile", httppprof.Profile)
	mux.HandleFunc("GET /debug/pprof/symbol", httppprof.Symbol)
	mux.HandleFunc("GET /debug/pprof/trace", httppprof.Trace)
}
