package mcptool

import "encoding/json"

// jsonMarshal is json.Marshal.
func jsonMarshal(v any) ([]byte, error) { return json.Marshal(v) }
