package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// dump writes r's client records and member arrivals into dir as JSON
// lines (pool-<scenario>-<target>.jsonl), for a reader who wants to see
// where each request went and why a figure is what it is.
func dump(dir string, r *result) error {
	f, err := os.Create(filepath.Join(dir, fmt.Sprintf("pool-%s-%s.jsonl", r.sc.name, r.target)))
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	h := homes()
	for _, rec := range r.recs {
		_ = enc.Encode(map[string]any{"kind": "client", "id": rec.id, "at_ms": rec.at.Milliseconds(), "session": rec.session,
			"home": h[rec.session], "stream": rec.stream, "ok": rec.ok, "why": rec.why, "served": rec.served,
			"ttfc_ms": float64(rec.ttfc.Microseconds()) / 1000, "lat_ms": float64(rec.lat.Microseconds()) / 1000})
	}
	for i, arr := range r.arr {
		for _, a := range arr {
			_ = enc.Encode(map[string]any{"kind": "member", "member": i, "id": a.id, "at_ms": a.at.Milliseconds(),
				"end_ms": a.end.Milliseconds(), "sick": a.sick, "key_ok": a.keyOK, "status": a.status})
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
