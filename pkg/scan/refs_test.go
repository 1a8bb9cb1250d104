package scan

import (
	"bytes"
	"encoding/binary"
	"strings"
	"testing"
)

// Pickle pieces for TestRefWording (protocol 4 opcodes, by hand).
func pG(mod, name string) string { return "c" + mod + "\n" + name + "\n" }
func pS(s string) string {
	var n [4]byte
	binary.LittleEndian.PutUint32(n[:], uint32(len(s)))
	return "X" + string(n[:]) + s
}
func pCall(f string, args ...string) string { return f + "(" + strings.Join(args, "") + "tR" }
func pWrap(body string) string              { return "\x80\x04](" + body + "e." }

// TestRefWording checks the texts resolve's refs word lazily (whyOf,
// viaOf) from their kind, node and inner refs, one case per kind the
// corpus does not reach: each is the text the eagerly worded refs gave.
func TestRefWording(t *testing.T) {
	made := pCall(pG("types", "FunctionType"), pS("a"))
	build := func(x string) string { return x + "}b" }
	for _, c := range []struct{ name, body, want string }{
		{"persid", pCall("Px\n", pS("arg")),
			"loading calls the object the loader's persistent_load returns for the persistent id at 4('arg') (REDUCE at 17): what it is cannot be known without running the pickle"},
		{"not callable", pCall("K\x05", pS("arg")),
			"loading calls a int at 4 (not callable: CPython fails here)('arg') (REDUCE at 16): what it is cannot be known without running the pickle"},
		{"made result", pCall(pCall(made, pS("b")), pS("arg")),
			"loading calls the result of the function or class made by types.FunctionType('a') (REDUCE at 32)('b') (REDUCE at 41), an object of the file's own code('arg') (REDUCE at 52): this runs code the file carries"},
		{"partial why", pCall(pCall(pG("functools", "partial"), "Px\n"), pS("arg")),
			"loading calls the object the loader's persistent_load returns for the persistent id at 24 through functools.partial at 28('arg') (REDUCE at 39): what it is cannot be known without running the pickle"},
		{"call unknown", pCall(pCall("Px\n"), pS("arg")),
			"loading calls the result of calling the object the loader's persistent_load returns for the persistent id at 4 (REDUCE at 9)('arg') (REDUCE at 20): what it is cannot be known without running the pickle"},
		{"attribute of made", pCall(pCall(pG("builtins", "getattr"), made, pS("attr")), pS("arg")),
			"loading calls the attribute 'attr' of the function or class made by types.FunctionType('a') (REDUCE at 51) (fetched by builtins.getattr at 62)('arg') (REDUCE at 73): this runs code the file carries"},
		{"import", build(pCall(pG("importlib", "import_module"), pS("os"))),
			"loading sets the state {} of os (BUILD at 40; module imported by importlib.import_module('os') at 38), an object loading did not create: it changes the running process"},
		{"dill import", build(pCall(pG("dill._dill", "_import_module"), pS("os.path"))),
			"loading sets the state {} of os.path (BUILD at 47; imported by dill._dill._import_module('os.path') at 45), an object loading did not create: it changes the running process"},
		{"sys.modules", build(pCall(pG("operator", "getitem"), pG("sys", "modules"), pS("os"))),
			"loading sets the state {} of os (BUILD at 46; sys.modules['os'] at 44), an object loading did not create: it changes the running process"},
		{"getattr", build(pCall(pG("builtins", "getattr"), pG("os", "path"), pS("join"))),
			"loading sets the state {} of os.path.join (BUILD at 44; fetched by builtins.getattr(os.path, 'join') at 42), an object loading did not create: it changes the running process"},
		{"named by", build(pCall(pG("pkgutil", "resolve_name"), pS("os.path:join"))),
			"loading sets the state {} of os.path.join (BUILD at 47; named by pkgutil.resolve_name('os.path:join') at 45), an object loading did not create: it changes the running process"},
		{"ext", pCall(pG("copyreg", "add_extension"), pS("os"), pS("system"), "K\x05") + "0\x82\x05",
			"loading fetches os.system (EXT1 at 51: code 5, registered by copyreg.add_extension at 49): runs a shell command"},
		{"dynamic global", pCall(pG("builtins", "str"), pS("os")) + pS("system") + "\x93",
			"loading looks up a global whose names are computed at load time (STACK_GLOBAL at 39, module builtins.str('os'), name 'system')"},
	} {
		rep := ScanReader(bytes.NewReader([]byte(pWrap(c.body))), c.name, DefaultPolicy())
		var got []string
		found := false
		for _, f := range rep.Findings {
			got = append(got, f.Reason)
			found = found || f.Reason == c.want
		}
		if !found {
			t.Errorf("%s: no finding says\n\t%s\ngot\n\t%s", c.name, c.want, strings.Join(got, "\n\t"))
		}
	}
}

// TestRefTablePack checks that a ref survives the table: names, severity,
// kind, inner codes and an EXT registration offset past 32 bits.
func TestRefTablePack(t *testing.T) {
	var tb refTable
	tb.reset()
	for _, r := range []ref{
		{ok: true, name: Name{"os", "system"}, w: wExtVia, n: 7, x: 1<<40 + 5},
		{made: true, maker: Name{"types", "FunctionType"}, sev: SevCode, w: wMadeResult, n: 9, in: [2]int32{-3, 2}},
		{sev: SevDangerous, w: wResult, n: 0, in: [2]int32{1}},
	} {
		if got := tb.get(tb.put(r)); got != r {
			t.Errorf("put then get: %+v, want %+v", got, r)
		}
	}
}
