package cli

import (
	"crypto/sha256"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/loopctl/loopctl-go/gateway"
)

// watchSettle is how long the config's folder must be quiet after a
// change before the file is read: an editor's or Kubernetes' update is
// several events (a ConfigMap swaps its ..data symlink after writing a
// new folder), and the reload should see the update whole.
const watchSettle = 200 * time.Millisecond

// reloads starts what reloads live: SIGHUP, and with --watch-config the
// config file's changes. The returned function stops them.
func (s serveSettings) reloads(live *gateway.Live, log *slog.Logger) (func(), error) {
	stopHup := reloadOnHangup(live)
	if !s.watch || s.configPath == "" {
		return stopHup, nil
	}
	stopWatch, err := watchConfig(live, s.configPath, log)
	if err != nil {
		stopHup()
		return nil, err
	}
	return func() { stopWatch(); stopHup() }, nil
}

// watchConfig reloads live when the config file at path changes
// (--watch-config), as SIGHUP does. It watches the file's folder, not the
// file: a ConfigMap update never writes the file, it swaps the ..data
// symlink the file points through, and an editor often replaces the file.
// After each burst of events the file is read and reloaded only when its
// bytes changed. The returned function stops the watch.
func watchConfig(live *gateway.Live, path string, log *slog.Logger) (func(), error) {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, err
	}
	if err := w.Add(filepath.Dir(path)); err != nil {
		_ = w.Close()
		return nil, err
	}
	done, stopped := make(chan struct{}), make(chan struct{})
	last := fileSum(path) // before serving: a change from now on is seen
	go func() {
		defer close(stopped)
		var settle <-chan time.Time
		for {
			select {
			case <-done:
				return
			case _, ok := <-w.Events:
				if !ok {
					return
				}
				settle = time.After(watchSettle)
			case err, ok := <-w.Errors:
				if !ok {
					return
				}
				log.Warn("config watch", "file", path, "error", err.Error())
			case <-settle:
				settle = nil
				if sum := fileSum(path); sum != "" && sum != last {
					last = sum
					log.Info("config file changed: reloading", "file", path)
					_, _ = live.Reload() // live logs the outcome
				}
			}
		}
	}()
	return func() { close(done); _ = w.Close(); <-stopped }, nil
}

// fileSum is the SHA-256 of the file at path ("": unreadable now).
func fileSum(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	s := sha256.Sum256(b)
	return string(s[:])
}
