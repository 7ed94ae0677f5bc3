package enumtext

import "testing"

type color int

var colorNames = []string{"red", "green", "blue"}

func TestRoundTrip(t *testing.T) {
	for i, n := range colorNames {
		b, err := Marshal("paint", "Color", color(i), colorNames)
		if err != nil || string(b) != n {
			t.Fatalf("Marshal(%d) = %q, %v", i, b, err)
		}
		c, err := Unmarshal[color]("paint", "color", b, colorNames)
		if err != nil || c != color(i) {
			t.Fatalf("Unmarshal(%q) = %d, %v", b, c, err)
		}
	}
}

func TestErrors(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"too large", second(Marshal("paint", "Color", color(3), colorNames)), "paint: cannot marshal invalid Color(3)"},
		{"negative", second(Marshal("paint", "Color", color(-1), colorNames)), "paint: cannot marshal invalid Color(-1)"},
		{"unknown", second(Unmarshal[color]("paint", "color", []byte("Red"), colorNames)), `paint: unknown color "Red" (want red, green or blue)`},
		{"two names", second(Unmarshal[color]("paint", "color", nil, colorNames[:2])), `paint: unknown color "" (want red or green)`},
	}
	for _, tt := range tests {
		if tt.err == nil || tt.err.Error() != tt.want {
			t.Errorf("%s: err = %v, want %q", tt.name, tt.err, tt.want)
		}
	}
}

func second[T any](_ T, err error) error { return err }

func TestSet(t *testing.T) {
	c := color(2)
	if err := Set(&c, "paint", "color", []byte("green"), colorNames); err != nil || c != 1 {
		t.Fatalf("Set(green) = %d, %v", c, err)
	}
	if err := Set(&c, "paint", "color", []byte("mauve"), colorNames); err == nil || c != 1 {
		t.Fatalf("Set(mauve) = %d, %v; want an error and the value kept", c, err)
	}
}
