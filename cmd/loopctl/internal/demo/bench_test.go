package demo

import "testing"

func BenchmarkCalc(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Calc("2 * (5 + 7) - 1200 / 16"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCalcParallel(b *testing.B) {
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := Calc("2 * (5 + 7) - 1200 / 16"); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkScriptedModel is one answer of a scripted model in the middle of a
// conversation (what the in-process server computes per request).
func BenchmarkScriptedModel(b *testing.B) {
	p := story[2].runs[0]
	msgs := conv(p.text, []string{toolSearch, toolSearch}, "search: down", `{"source":"x","results":[]}`)
	pl := plans()
	b.ReportAllocs()
	for b.Loop() {
		if r := answer(msgs, pl); len(r.ToolCalls) != 1 {
			b.Fatal(r)
		}
	}
}

func BenchmarkScriptedModelParallel(b *testing.B) {
	p := story[2].runs[0]
	msgs := conv(p.text, []string{toolSearch, toolSearch}, "search: down", `{"source":"x","results":[]}`)
	pl := plans()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if r := answer(msgs, pl); len(r.ToolCalls) != 1 {
				b.Error(r)
				return
			}
		}
	})
}
