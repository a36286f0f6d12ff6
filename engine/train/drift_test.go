package train

import (
	"fmt"
	"math"
	"testing"

	"perch/engine/lora"
)

// TestFreeRunDriftIsStepOneNoise explains why a free run (the command
// line's, TestAdamWFreeRunning's) is checked with wider bounds after step 1
// than the fixture README's end-to-end tolerances. Adam's first step moves
// an entry whose gradient is near float32 noise by an amount set by that
// noise (README: up to 6.3 x lr; with the clip active, m/(sqrt(v)+eps) is
// proportional to g below |g| ~ 1e-5), and steps 2 and 3 amplify it. The
// noise entries are the README's: |sft.grad| <= 1e-3 x max. Take our own
// step 1, then:
//   - put the golden's step-1 values (leaf, m, v) back at the noise entries
//     only: our steps 2 and 3 hold the README's tolerances (loss 1e-3, grad
//     norm 1e-3 relative, leaves after step 3 2e-3 LoRA+ / 2e-4 plain);
//   - put our step-1 values at the noise entries only into the golden's
//     step-1 iterate: after steps 2 and 3 the leaves are within a tenth of
//     the free run's distance to the golden of the free run's (which is
//     past the README's bound: else the free-run bounds should be the
//     README's).
//
// So the drift has no cause but the noise entries' step-1 moves.
func TestFreeRunDriftIsStepOneNoise(t *testing.T) {
	for _, bc := range goldenBackends() {
		for _, run := range []struct {
			prefix string
			ratio  float64
			atol3  float64
		}{{"adamw_loraplus.", 16, 2e-3}, {"adamw_plain.", 1, 2e-4}} {
			t.Run(bc.name+"/"+run.prefix, func(t *testing.T) {
				fx := newFixture(t, bc.make(t))
				initial := fx.ad
				o := Options{Method: SFT, LearningRate: 1e-3, LoRAPlusRatio: run.ratio, WeightDecay: 0.01, GradClip: 1}
				free := fx.trainer(o)
				if _, err := free.Step(fx.sftRows()); err != nil {
					t.Fatal(err)
				}
				ours, err := free.Snapshot()
				if err != nil {
					t.Fatal(err)
				}
				names, oopt := free.names, free.opt.clone()
				gopt, gad := fx.goldenStep(names, nil, initial, "sft.grad.", run.ratio)
				noise, count := fx.noiseMask(names)
				// splice: base's step-1 state with other's at the entries where
				// take is true.
				splice := func(base, other *lora.Adapter, bopt, oopt *adamw, take func(i, j int) bool) (*lora.Adapter, *adamw) {
					ad, opt := &lora.Adapter{Config: base.Config, Leaves: map[string]lora.Leaf{}}, bopt.clone()
					for i, n := range names {
						d := append([]float32(nil), base.Leaves[n].Data...)
						for j := range d {
							if take(i, j) {
								d[j], opt.m[i][j], opt.v[i][j] = other.Leaves[n].Data[j], oopt.m[i][j], oopt.v[i][j]
							}
						}
						ad.Leaves[n] = lora.Leaf{Shape: base.Leaves[n].Shape, Data: d}
					}
					return ad, opt
				}
				steps23 := func(ad *lora.Adapter, opt *adamw) (*Trainer, bool, string) {
					fx.ad = ad
					tr := fx.trainer(o)
					tr.opt = opt
					return fx.stepsAfterOne(tr, run.prefix, run.atol3)
				}
				for k := 1; k < 3; k++ {
					if _, err := free.Step(fx.sftRows()); err != nil {
						t.Fatal(err)
					}
				}
				ad, opt := splice(ours, gad, oopt, gopt, func(i, j int) bool { return noise[i][j] })
				_, held, line := steps23(ad, opt)
				t.Logf("ours, golden at the %d noise entries:%s", count, line)
				if !held {
					t.Errorf("with the golden's values at the noise entries our steps 2 and 3 miss the README's tolerances")
				}
				ad, opt = splice(gad, ours, gopt, oopt, func(i, j int) bool { return noise[i][j] })
				tr, _, line := steps23(ad, opt)
				t.Logf("golden, ours at the noise entries:%s", line)
				d := adapterDiff(t, tr, free)
				fd := fx.checkLeaves(free, run.prefix+"after_step3.", math.Inf(1), "")
				t.Logf("leaves after step 3: free run vs golden %.3g (README %g); golden with our noise entries vs free run %.3g", fd, run.atol3, d)
				if d > fd/10 || fd <= run.atol3 {
					t.Errorf("our noise entries alone should take the golden to the free run (%.3g, want <= %.3g) and the free run drift past %g", d, fd/10, run.atol3)
				}
			})
		}
	}
}

// noiseMask marks the entries whose step-1 gradient is at most 1e-3 of the
// largest (the README's float32-noise entries) and counts them.
func (f *fixture) noiseMask(names []string) ([][]bool, int) {
	var gmax float64
	for _, n := range names {
		for _, v := range f.f32("sft.grad." + n) {
			gmax = math.Max(gmax, math.Abs(float64(v)))
		}
	}
	mask, count := make([][]bool, len(names)), 0
	for i, n := range names {
		for _, v := range f.f32("sft.grad." + n) {
			noisy := math.Abs(float64(v)) <= 1e-3*gmax
			mask[i] = append(mask[i], noisy)
			if noisy {
				count++
			}
		}
	}
	return mask, count
}

// stepsAfterOne takes steps 2 and 3 with tr and says whether they held the
// README's end-to-end tolerances (loss 1e-3, grad norm 1e-3 relative,
// leaves after step 3 atol3).
func (f *fixture) stepsAfterOne(tr *Trainer, prefix string, atol3 float64) (*Trainer, bool, string) {
	losses, norms := f.f32(prefix+"loss_before_step"), f.f32(prefix+"grad_norm_before_clip")
	held, line := true, ""
	for k := 1; k < 3; k++ {
		m, err := tr.Step(f.sftRows())
		if err != nil {
			f.t.Fatal(err)
		}
		dl, dn := math.Abs(m.Loss-float64(losses[k])), math.Abs(m.GradNorm/float64(norms[k])-1)
		line += fmt.Sprintf(" step %d loss |diff| %.2g, grad norm rel diff %.2g;", k+1, dl, dn)
		held = held && dl <= 1e-3 && dn <= 1e-3
	}
	d := f.checkLeaves(tr, prefix+"after_step3.", math.Inf(1), "")
	return tr, held && d <= atol3, fmt.Sprintf("%s leaves after step 3 %.3g", line, d)
}

// adapterDiff is the largest |leaf entry difference| between two trainers.
func adapterDiff(t *testing.T, a, b *Trainer) float64 {
	x, err := a.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	y, err := b.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	var worst float64
	for n, l := range x.Leaves {
		for j, v := range l.Data {
			worst = math.Max(worst, math.Abs(float64(v)-float64(y.Leaves[n].Data[j])))
		}
	}
	return worst
}
