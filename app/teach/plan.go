package teach

import (
	"encoding/json"
	"fmt"

	"perch/ui"
)

// planVersion is the version of storedPlan this Perch writes and the
// newest it knows the fields of.
const planVersion = 1

// planReader is the oldest reader a plan this Perch writes needs: a
// writer raises it (to its own version) only with a change an older
// Perch would get wrong by ignoring what it does not know (a field whose
// meaning changed, or one a run must not go without). Adding a field
// leaves it as it is.
const planReader = 1

// storedPlan is a run's plan as the history keeps it: tagged JSON with a
// version. Reading is forward-compatible: a later Perch reads an older
// run's plan; an older Perch reads a newer plan's fields it knows and
// ignores the rest, and refuses it in words only when the plan says
// (Reader) that this Perch is too old for it.
type storedPlan struct {
	Version       int     `json:"version"`
	Reader        int     `json:"reader,omitempty"` // the oldest plan version that reads this plan right (absent: 1)
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
	raw, _ := json.Marshal(storedPlan{Version: planVersion, Reader: planReader, Base: p.Base, Name: p.Name,
		Feedback: p.Source.Feedback, Folder: p.Source.Folder, Method: string(p.Method), Rank: p.Rank,
		Steps: p.Steps, LearningRate: p.LearningRate, LoRAPlusRatio: p.LoRAPlusRatio, ValShare: p.ValShare,
		BatchSize: p.BatchSize, MaxSeqLen: p.MaxSeqLen, Beta: p.Beta, Lambda: p.Lambda})
	return string(raw)
}

// maxPlanBytes bounds a stored plan: a few hundred bytes in practice.
const maxPlanBytes = 64 << 10

// decodePlan reads a stored plan: any version whose reader this Perch
// is (its known fields; unknown ones are ignored), or the untagged plan
// Perch stored before plans had one (version 0).
func decodePlan(raw string) (ui.TrainPlan, error) {
	if len(raw) > maxPlanBytes {
		return ui.TrainPlan{}, fmt.Errorf("the plan is %d bytes, over %d", len(raw), maxPlanBytes)
	}
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
	var s storedPlan
	if err := json.Unmarshal([]byte(raw), &s); err != nil {
		return ui.TrainPlan{}, err
	}
	if s.Version < 1 || s.Reader < 0 || s.Reader > s.Version {
		return ui.TrainPlan{}, fmt.Errorf("the plan's version %d (reader %d) is not one Perch writes", s.Version, s.Reader)
	}
	if s.Reader > planVersion {
		return ui.TrainPlan{}, fmt.Errorf("the plan was written by a newer Perch (plan version %d) with a change this Perch (plan version %d) cannot read: update Perch to use this run",
			s.Version, planVersion)
	}
	return ui.TrainPlan{Base: s.Base, Name: s.Name, Source: ui.TeachSource{Feedback: s.Feedback, Folder: s.Folder},
		Method: ui.TrainMethod(s.Method), Rank: s.Rank, Steps: s.Steps, LearningRate: s.LearningRate,
		LoRAPlusRatio: s.LoRAPlusRatio, ValShare: s.ValShare, BatchSize: s.BatchSize, MaxSeqLen: s.MaxSeqLen,
		Beta: s.Beta, Lambda: s.Lambda}, nil
}
