//go:build race

package fallback

const raceEnabled = true
