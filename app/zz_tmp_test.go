package main

import (
	"fmt"
	"testing"

	"perch/ui"
)

func TestTmpVal(t *testing.T) {
	r := newTeachRig(t, t.TempDir())
	r.teachSome(3)
	plan := ui.TrainPlan{Base: "tiny", Name: "my-style", Source: ui.TeachSource{Feedback: true}, Method: ui.MethodDPO,
		Rank: 8, Steps: 12, LearningRate: 1e-5, LoRAPlusRatio: 16, ValShare: 0.1, BatchSize: 1, MaxSeqLen: 2048, Beta: 0.1, Lambda: 0.1}
	run, err := r.svc.Start(plan)
	if err != nil {
		t.Fatal(err)
	}
	for u := range r.updates {
		fmt.Printf("%s step %d best %v %s pts %v\n", u.Run.State, u.Run.Step, u.Run.BestVal, u.Run.Err, u.Points)
		if !u.Run.State.Active() {
			break
		}
	}
	_ = run
}
