package sandbox

import (
	"context"
	"errors"
	"fmt"

	"github.com/tetratelabs/wazero/api"
)

// The QuickJS C ABI: calls into the exports of qjs.wasm (JS_Eval,
// JS_NewString, …) and the memory they share with Go.

func (in *instance) fn(name string) api.Function {
	f, ok := in.fns[name]
	if !ok {
		f = in.mod.ExportedFunction(name)
		in.fns[name] = f
	}
	return f
}

// call calls an exported function and returns its first result.
func (in *instance) call(ctx context.Context, name string, args ...uint64) (uint64, error) {
	f := in.fn(name)
	if f == nil {
		return 0, fmt.Errorf("quickjs export %s missing", name)
	}
	res, err := f.Call(ctx, args...)
	if err != nil {
		return 0, err
	}
	if len(res) == 0 {
		return 0, nil
	}
	return res[0], nil
}

// cstring copies s into WASM memory, NUL terminated; free it with free.
func (in *instance) cstring(ctx context.Context, s string) (uint32, error) {
	p, err := in.call(ctx, "malloc", uint64(len(s)+1))
	if err != nil {
		return 0, err
	}
	if p == 0 {
		return 0, errOOM
	}
	buf, ok := in.mem.Read(uint32(p), uint32(len(s)+1))
	if !ok {
		return 0, errOOM
	}
	copy(buf, s)
	buf[len(s)] = 0
	return uint32(p), nil
}

func (in *instance) free(ctx context.Context, p uint32) error {
	if p == 0 {
		return nil
	}
	_, err := in.call(ctx, "free", uint64(p))
	return err
}

var errOOM = errors.New("out of memory")

// newString creates a JS string value.
func (in *instance) newString(ctx context.Context, s string) (uint64, error) {
	p, err := in.cstring(ctx, s)
	if err != nil {
		return 0, err
	}
	v, err := in.call(ctx, "QJS_NewString", uint64(in.jctx), uint64(p))
	if ferr := in.free(ctx, p); err == nil {
		err = ferr
	}
	return v, err
}

// toString converts a JS value to a Go string (as String(v) would). ok is
// false when the conversion threw.
func (in *instance) toString(ctx context.Context, v uint64) (string, bool, error) {
	pp, err := in.call(ctx, "QJS_ToCString", uint64(in.jctx), v)
	if err != nil {
		return "", false, err
	}
	if pp == 0 {
		return "", false, nil
	}
	packed, ok := in.mem.ReadUint64Le(uint32(pp))
	if !ok {
		return "", false, errors.New("bad string pointer")
	}
	sp, n := uint32(packed>>32), uint32(packed)
	b, ok := in.mem.Read(sp, n)
	if !ok {
		return "", false, errors.New("bad string pointer")
	}
	s := string(b)
	if _, err := in.call(ctx, "JS_FreeCString", uint64(in.jctx), uint64(sp)); err != nil {
		return "", false, err
	}
	return s, true, in.free(ctx, uint32(pp))
}

func (in *instance) freeValue(ctx context.Context, v uint64) error {
	_, err := in.call(ctx, "QJS_FreeValue", uint64(in.jctx), v)
	return err
}

// JS eval flags (quickjs.h).
const (
	evalGlobal = 0
	evalStrict = 1 << 3
	evalAsync  = 1 << 7
)

// eval evaluates code as a global script (top-level await allowed when
// flags has evalAsync) and runs the job loop. It returns the exception text
// ("" if none). After an error the instance must be discarded, so nothing
// is freed then.
func (in *instance) eval(ctx context.Context, file, code string, flags uint64) (string, error) {
	cp, err := in.cstring(ctx, code)
	if err != nil {
		return "", err
	}
	fp, err := in.cstring(ctx, file)
	if err != nil {
		return "", err
	}
	op, err := in.call(ctx, "QJS_CreateEvalOption", uint64(cp), 0, 0, uint64(fp), flags)
	if err != nil {
		return "", err
	}
	if op == 0 {
		return "", errOOM
	}
	v, err := in.call(ctx, "QJS_Eval", uint64(in.jctx), op)
	if err != nil {
		return "", err
	}
	for _, p := range []uint32{uint32(op), fp, cp} {
		if err := in.free(ctx, p); err != nil {
			return "", err
		}
	}
	isExc, err := in.call(ctx, "QJS_IsException", v)
	if err != nil {
		return "", err
	}
	if isExc&0xff == 0 {
		return "", in.freeValue(ctx, v)
	}
	return in.exception(ctx)
}

// exception takes the pending exception and formats it with its stack.
func (in *instance) exception(ctx context.Context) (string, error) {
	exc, err := in.call(ctx, "JS_GetException", uint64(in.jctx))
	if err != nil {
		return "", err
	}
	defer in.freeValue(ctx, exc)
	msg, ok, err := in.toString(ctx, exc)
	if err != nil {
		return "", err
	}
	if !ok {
		msg = "uncaught exception"
	}
	sp, err := in.cstring(ctx, "stack")
	if err != nil {
		return msg, err
	}
	defer in.free(ctx, sp)
	st, err := in.call(ctx, "JS_GetPropertyStr", uint64(in.jctx), exc, uint64(sp))
	if err != nil {
		return msg, err
	}
	defer in.freeValue(ctx, st)
	if isStr, _ := in.call(ctx, "QJS_IsString", st); isStr&0xff != 0 {
		if s, ok, err := in.toString(ctx, st); err == nil && ok && s != "" {
			msg += "\n" + s
		}
	}
	return msg, nil
}

// installHost defines a global function name that calls the host with
// handler id.
func (in *instance) installHost(ctx context.Context, name string, id uint64) error {
	f, err := in.call(ctx, "QJS_CreateFunctionProxy", uint64(in.jctx), id, 0, 0)
	if err != nil {
		return err
	}
	g, err := in.call(ctx, "JS_GetGlobalObject", uint64(in.jctx))
	if err != nil {
		return err
	}
	defer in.freeValue(ctx, g)
	np, err := in.cstring(ctx, name)
	if err != nil {
		return err
	}
	defer in.free(ctx, np)
	r, err := in.call(ctx, "JS_SetPropertyStr", uint64(in.jctx), g, uint64(np), f)
	if err != nil {
		return err
	}
	if int32(r) < 0 {
		return fmt.Errorf("define %s", name)
	}
	return nil
}
