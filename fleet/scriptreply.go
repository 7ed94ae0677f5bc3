package fleet

import (
	"errors"

	"github.com/redis/rueidis"
)

// errReplyType is the error of a script reply that is not integers (and,
// where asked for, one trailing string).
var errReplyType = errors.New("fleet: script reply is not integers")

// replyInts reads a script's reply: integers, and with tail non-nil an
// optional last element that is a string, stored in *tail ("" when the
// reply ends with an integer). A script adds such a string only when it
// has news for the caller (modelLua's act), so that the common reply stays
// integers only.
func replyInts(res rueidis.RedisResult, tail *string) ([]int64, error) {
	if tail == nil {
		return res.AsIntSlice()
	}
	*tail = ""
	arr, err := res.ToArray()
	if err != nil {
		return nil, err
	}
	v := make([]int64, 0, len(arr))
	for i, e := range arr {
		if e.IsInt64() {
			n, _ := e.AsInt64()
			v = append(v, n)
			continue
		}
		if i != len(arr)-1 {
			return nil, errReplyType
		}
		if *tail, err = e.ToString(); err != nil {
			return nil, errReplyType
		}
	}
	return v, nil
}
