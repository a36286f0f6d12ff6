package teach

import (
	"encoding/json"
	"fmt"

	"perch/ui"
)

// planVersion is the version of storedPlan this Perch writes.
const planVersion = 1

// storedPlan is a run's plan as the history keeps it: tagged JSON with a
// version, so a later Perch reads an older run's plan and an older Perch
// refuses a newer one in words instead of guessing.
type storedPlan struct {
	Version       int     `json:"version"`
	Base          string  `json:"base"`
	Name          string  `json:"name"`
	Feedback      bool    `json:"feedback"`
	Folder        string  `json:"folder,omitempty"`
	Method        string  `json:"method"`
	Rank          int     `json:"rank"`
	Steps         int     `json:"steps"`
	LearningRate  float64 `json:"learning_rate"`
	LoRAPlusRatio float64 `json:"lora_plus_ratio"`
	ValShare      float64 `json:"val_share"`
	BatchSize     int     `json:"batch_size"`
	MaxSeqLen     int     `json:"max_seq_len"`
	Beta          float64 `json:"beta,omitempty"`
	Lambda        float64 `json:"lambda,omitempty"`
}

// encodePlan is plan as the history stores it.
func encodePlan(p ui.TrainPlan) string {
	raw, _ := json.Marshal(storedPlan{Version: planVersion, Base: p.Base, Name: p.Name,
		Feedback: p.Source.Feedback, Folder: p.Source.Folder, Method: string(p.Method), Rank: p.Rank,
		Steps: p.Steps, LearningRate: p.LearningRate, LoRAPlusRatio: p.LoRAPlusRatio, ValShare: p.ValShare,
		BatchSize: p.BatchSize, MaxSeqLen: p.MaxSeqLen, Beta: p.Beta, Lambda: p.Lambda})
	return string(raw)
}

// decodePlan reads a stored plan: this version, or the untagged plan
// Perch stored before plans had one (version 0).
func decodePlan(raw string) (ui.TrainPlan, error) {
	var probe struct {
		Version *int `json:"version"`
	}
	if err := json.Unmarshal([]byte(raw), &probe); err != nil {
		return ui.TrainPlan{}, err
	}
	if probe.Version == nil {
		var p ui.TrainPlan // version 0: the Teach page's own struct, field names as keys
		err := json.Unmarshal([]byte(raw), &p)
		return p, err
	}
	if v := *probe.Version; v > planVersion || v < 1 {
		return ui.TrainPlan{}, fmt.Errorf("the plan is version %d; this Perch reads up to %d: update Perch to use this run", v, planVersion)
	}
	var s storedPlan
	if err := json.Unmarshal([]byte(raw), &s); err != nil {
		return ui.TrainPlan{}, err
	}
	return ui.TrainPlan{Base: s.Base, Name: s.Name, Source: ui.TeachSource{Feedback: s.Feedback, Folder: s.Folder},
		Method: ui.TrainMethod(s.Method), Rank: s.Rank, Steps: s.Steps, LearningRate: s.LearningRate,
		LoRAPlusRatio: s.LoRAPlusRatio, ValShare: s.ValShare, BatchSize: s.BatchSize, MaxSeqLen: s.MaxSeqLen,
		Beta: s.Beta, Lambda: s.Lambda}, nil
}
