package fleet

import (
	"context"
	"strconv"
)

// One event of a shared model breaker: the arguments of its script call
// (modelLua) and the reply applied to the mirror.

// extra is the part of a script call that carries time and the turn's memory: a failure's hint (store µs, 0
// none) and timeout flag, the turn's probed flag and slow models, and the
// entry a hedge skips; for a manual op its time to live, reason and the
// operator's act it is (modelact.go).
type extra struct {
	hint   int64
	tmo    bool
	probed bool
	slow   string
	skip   int
	ttl    int64  // hold, disable: µs from the store's now
	reason string // hold, disable: the reason written; with act set, the act's reason for any act
	act    string // the operator's act (hold, release, disable, enable, reset); "" none
}

func b01(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// script runs one event and applies its reply to the mirror. t is the
// ticket (zero for begin/avail/reset/sync).
func (m *ModelBreaker) script(ctx context.Context, op string, t Turn, kind, flag int, run bool, x extra) ([]int64, error) {
	before := m.mirror.Load()
	v, seen, err := m.eval(ctx, op, t, kind, flag, run, x, before)
	if err != nil {
		return nil, err
	}
	width := m.width()
	du, k := v[width+4:width+4+m.n], v[width+4+m.n:]
	act := x.made(v[0], v[1], v[width])
	if act == nil {
		act = seen // another process's act this reply shows first
	}
	if run {
		m.apply(v[:width], du, k, before, act)
	} else {
		m.apply(v[:width], du, k, nil, act)
	}
	return v, nil
}

// eval runs one event's script call and returns its reply, checked for
// length, unapplied: with run, on ctx (no store-down marking), else with
// the store timeout. mr is the mirror the reply will be applied to; seen is
// the latest act if the step from mr to the reply's state contains it
// (modelLua), else nil.
func (m *ModelBreaker) eval(ctx context.Context, op string, t Turn, kind, flag int, run bool, x extra, mr *modelMirror) (v []int64, seen *opAct, err error) {
	args := make([]string, 0, 30)
	args = append(args, op)
	tu := m.tuned()
	args = append(args, tu.static[:]...)
	args = append(args, strconv.FormatUint(t.ep, 10), strconv.FormatUint(t.gen, 10), strconv.FormatUint(t.ce, 10),
		strconv.FormatUint(t.probe, 10), strconv.Itoa(t.entry), strconv.Itoa(kind), strconv.Itoa(flag), m.s.clock.arg())
	args = append(args, tu.quota, strconv.FormatInt(x.hint, 10), b01(x.tmo), strconv.FormatInt(t.issued, 10),
		b01(x.probed), x.slow, strconv.Itoa(x.skip), strconv.FormatInt(x.ttl, 10), x.reason, tu.bkoff[0], tu.bkoff[1], x.act,
		strconv.FormatUint(mr.ep, 10), strconv.FormatUint(mr.v, 10))
	width := m.width()
	var tail string
	if run {
		v, err = m.s.run(ctx, modelScript, m.keys, args, width, &tail)
	} else {
		v, err = m.s.exec(modelScript, m.keys, args, width, &tail)
	}
	if err != nil {
		return nil, nil, err
	}
	if len(v) != width+4+m.n+2 {
		return nil, nil, errShortReply
	}
	seen, _ = parseAct(tail)
	return v, seen, nil
}
