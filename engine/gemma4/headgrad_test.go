package gemma4_test

import (
	"testing"

	"perch/engine/gocpu"
	"perch/engine/golden"
	"perch/engine/tensor"
)

// TestTargetLogProbs: the blocked head gives what the full logits give
// (log softmax of Logits(HeadNorm(h)) at the targets), and its gradient
// does not depend on the block size, dense and 4-bit, on every backend.
func TestTargetLogProbs(t *testing.T) {
	for name, nb := range backends() {
		for _, model := range []string{"text-tiny", "text-tiny-q4"} {
			b := nb()
			m := load(t, b, model)
			n, H := 5, m.Text.Cfg.HiddenSize
			ids := []int32{2, 485, 494, 539, 301}
			hid := b.Reshape(m.Text.Embed(b.FromInt32(ids, []int{1, n})), n, H)
			hn := m.Text.HeadNorm(hid)
			tg := []int32{7, 1000, 3, 500, 1023}
			tgt := b.FromInt32(tg, []int{n})
			full := m.Text.Logits(b.Reshape(hn, 1, n, H))
			ref := b.Reshape(b.Sub(b.TakeAlong(full, b.FromInt32(tg, []int{1, n, 1}), -1), b.LogSumExp(full, -1, true)), n)
			lp1, d1 := m.Text.TargetLogProbs(hn, tgt, true, 1<<30)
			lp2, d2 := m.Text.TargetLogProbs(hn, tgt, true, 4*n*100) // blocks of 100 rows, a ragged last one
			for what, pair := range map[string][2]tensor.Tensor{"logp one block": {lp1, ref}, "logp blocks": {lp2, ref}, "grad blocks": {d2, d1}} {
				d, err := golden.Compare(must(b.Float32s(pair[0])), must(b.Float32s(pair[1])))
				if err != nil || d.Max > 2e-5 {
					t.Fatalf("%s %s %s: %v %v", name, model, what, d, err)
				}
			}
		}
	}
}

// composedOnly hides a backend's fused ops: only tensor.Backend's methods.
type composedOnly struct{ tensor.Backend }

// TestHeadBlockFusedMatchesComposed: the Go backend's fused head block
// (SoftcapLogSoftmax) gives the log-probabilities and gradient that the
// same backend's single ops give, dense and 4-bit, in one block and in
// ragged blocks.
func TestHeadBlockFusedMatchesComposed(t *testing.T) {
	for _, model := range []string{"text-tiny", "text-tiny-q4"} {
		b := gocpu.New(gocpu.Options{})
		m := load(t, b, model)
		n, H := 5, m.Text.Cfg.HiddenSize
		hid := b.Reshape(m.Text.Embed(b.FromInt32([]int32{2, 485, 494, 539, 301}, []int{1, n})), n, H)
		hn := m.Text.HeadNorm(hid)
		tgt := b.FromInt32([]int32{7, 1000, 3, 500, 1023}, []int{n})
		composed := m.Text.WithBackend(composedOnly{b}, m.Text.Adapter)
		for _, block := range []int{1 << 30, 4 * n * 100} {
			lpF, dF := m.Text.TargetLogProbs(hn, tgt, true, block)
			lpC, dC := composed.TargetLogProbs(hn, tgt, true, block)
			lpN, _ := m.Text.TargetLogProbs(hn, tgt, false, block)
			for what, pair := range map[string][2]tensor.Tensor{"logp": {lpF, lpC}, "logp without grad": {lpN, lpC}, "grad": {dF, dC}} {
				d, err := golden.Compare(must(b.Float32s(pair[0])), must(b.Float32s(pair[1])))
				if err != nil || d.Max > 2e-6 {
					t.Fatalf("%s block %d %s: fused vs composed %v %v", model, block, what, d, err)
				}
				t.Logf("%s block %d %s: fused vs composed %v", model, block, what, d)
			}
		}
	}
}
