package mcptool

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/oauth2"
)

// ErrTokenFileInsecure matches every [*TokenFileError] about a token file
// that others than its owner may read.
var ErrTokenFileInsecure = errors.New("mcptool: token file readable by group or others")

// TokenFileError is a token file that cannot be used as it is.
type TokenFileError struct {
	Path string      // the file
	Mode fs.FileMode // its permission bits
}

// Error says what is wrong and how to fix it.
func (e *TokenFileError) Error() string {
	return fmt.Sprintf("mcptool: token file %s is readable by group or others (mode %04o): chmod 600 %s", e.Path, e.Mode.Perm(), e.Path)
}

// Is reports whether target is ErrTokenFileInsecure.
func (e *TokenFileError) Is(target error) bool { return target == ErrTokenFileInsecure }

// storedGrant is what a token file holds: the token, and what refreshing it
// needs after a restart (the client registration and the token endpoint).
type storedGrant struct {
	Server       string           `json:"server"`
	ClientID     string           `json:"client_id"`
	ClientSecret string           `json:"client_secret,omitempty"`
	TokenURL     string           `json:"token_url"`
	AuthStyle    oauth2.AuthStyle `json:"auth_style"`
	Token        *oauth2.Token    `json:"token"`
}

// config is the oauth2 configuration that refreshes g's token.
func (g *storedGrant) config() *oauth2.Config {
	return &oauth2.Config{ClientID: g.ClientID, ClientSecret: g.ClientSecret,
		Endpoint: oauth2.Endpoint{TokenURL: g.TokenURL, AuthStyle: g.AuthStyle}}
}

// tokenFile is one server's token file. It is written with mode 0600 and
// refused when group or others may read it: it holds bearer credentials.
type tokenFile struct{ path string }

// load returns the stored grant, or nil when the file does not exist.
func (f tokenFile) load() (*storedGrant, error) {
	st, err := os.Stat(f.path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if st.Mode().Perm()&0o077 != 0 {
		return nil, &TokenFileError{Path: f.path, Mode: st.Mode()}
	}
	data, err := os.ReadFile(f.path)
	if err != nil {
		return nil, err
	}
	var g storedGrant
	if err := json.Unmarshal(data, &g); err != nil {
		// Not wrapped: a JSON syntax error may quote the file's bytes.
		return nil, fmt.Errorf("mcptool: token file %s: not a token file written by loopctl", f.path)
	}
	if g.Token == nil || g.TokenURL == "" || g.ClientID == "" {
		return nil, fmt.Errorf("mcptool: token file %s: incomplete (no token, client_id or token_url)", f.path)
	}
	return &g, nil
}

// save replaces the file with g, atomically: a new file of mode 0600 in the
// same directory (created 0700 if missing), renamed over the old one.
func (f tokenFile) save(g *storedGrant) error {
	dir := filepath.Dir(f.path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	data, err := json.MarshalIndent(g, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".token-*") // mode 0600
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), f.path)
}
