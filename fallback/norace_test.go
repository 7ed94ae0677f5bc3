//go:build !race

package fallback

const raceEnabled = false
