package teach

import (
	"errors"
	"fmt"

	"perch/engine/trainset"
	"perch/ui"
)

// trainData is what one run trains on: rows as the engine takes them, or
// (a run started before rows went straight through) its dataset folder.
type trainData struct {
	folder       string
	train, valid []trainset.Example
}

// rowsFor gathers the plan's rows from its sources as the engine takes
// them: feedback rows with their attachments named by hash, a folder's
// lines as the user wrote them.
func (s *Service) rowsFor(plan ui.TrainPlan) (trainData, error) {
	d, err := s.gather(plan.Source, plan.Method, plan.ValShare)
	if err != nil {
		return trainData{}, err
	}
	if len(d.Train)+len(d.RawTrain) == 0 {
		return trainData{}, errors.New("nothing to train on: the data has no rows for this method")
	}
	tr, va := d.Examples()
	return trainData{train: tr, valid: va}, nil
}

// readMedia gives an attachment's bytes by its hash (the name its parts
// carry).
func (s *Service) readMedia(kind, name string) ([]byte, error) {
	switch kind {
	case "image", "audio", "video":
	default:
		return nil, fmt.Errorf("a %q attachment cannot be trained on", kind)
	}
	return s.o.Store.ReadBlob(name)
}
