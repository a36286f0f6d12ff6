package main

import (
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// TestGOMAXPROCSHonoured runs this test binary (which links Fyne, and so
// bild/parallel's init, as perch does) with GOMAXPROCS=1: after every
// init, the child must see one P.
func TestGOMAXPROCSHonoured(t *testing.T) {
	if os.Getenv("PERCH_PROCS_CHILD") == "1" {
		os.Stdout.WriteString("procs=" + strconv.Itoa(runtime.GOMAXPROCS(0)) + "\n")
		return
	}
	if runtime.NumCPU() < 2 {
		t.Skip("one CPU: GOMAXPROCS=1 is also what an overriding init would set")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestGOMAXPROCSHonoured$", "-test.count=1")
	cmd.Env = append(os.Environ(), "PERCH_PROCS_CHILD=1", "GOMAXPROCS=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "procs=1\n") {
		t.Fatalf("GOMAXPROCS=1 not honoured after init:\n%s", out)
	}
}
