package wire

// Skipped decodes body, a client request on wire from, and returns the
// first parameter no other wire can express ("" when every wire can): the
// one [Translate] would refuse with an *UnsupportedError, whatever the
// target. A gateway asks it once per request to know, without translating,
// which pool members on another wire can serve the request (GATEWAY §8.3,
// §11.4). A body that does not decode is a *RequestError.
func Skipped(from API, body []byte) (string, error) {
	req, err := decodeRequest(from, body)
	if err != nil {
		return "", err
	}
	if len(req.Skip) > 0 {
		return req.Skip[0], nil
	}
	return "", nil
}
