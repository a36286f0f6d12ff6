package desktop

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestAppIDAndVersionMatchFyneAppToml(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "FyneApp.toml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`ID = "` + AppID + `"`, `Version = "` + Version + `"`, "fyneDo = true"} {
		if !strings.Contains(string(data), want) {
			t.Errorf("FyneApp.toml lacks %s", want)
		}
	}
}
