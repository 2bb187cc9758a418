package script

import (
	"strings"

	"github.com/dop251/goja"
)

// console.log and its siblings format their arguments as Node's util.format does: when the
// first argument is a string, its %s (text), %d (a number), %i (an integer), %f (a float),
// %j (JSON), %o and %O (an object, shown here as JSON) and %c (a CSS style, dropped) each take
// the next argument, %% is a percent sign, and a specifier with no argument left stays as it
// is; the arguments left over are appended, separated by spaces. Objects show as JSON, where
// Node would show its own inspection; a value JSON cannot show (a cycle) shows as [Circular].
type consoleFormat struct {
	stringify, parseInt, parseFloat goja.Callable
}

func newConsoleFormat(rt *goja.Runtime) consoleFormat {
	fn := func(v goja.Value) goja.Callable {
		f, _ := goja.AssertFunction(v) // the runtime's own globals: always functions
		return f
	}
	return consoleFormat{
		stringify:  fn(rt.Get("JSON").ToObject(rt).Get("stringify")),
		parseInt:   fn(rt.Get("parseInt")),
		parseFloat: fn(rt.Get("parseFloat")),
	}
}

// format is the line console.log(args...) writes.
func (f consoleFormat) format(args []goja.Value) string {
	if len(args) == 0 {
		return ""
	}
	var b strings.Builder
	rest := args
	if s, ok := args[0].Export().(string); ok && strings.Contains(s, "%") {
		rest = args[1:]
		next := func() (goja.Value, bool) {
			if len(rest) == 0 {
				return nil, false
			}
			v := rest[0]
			rest = rest[1:]
			return v, true
		}
		for i := 0; i < len(s); i++ {
			if s[i] != '%' || i+1 == len(s) {
				b.WriteByte(s[i])
				continue
			}
			spec := s[i+1]
			if spec == '%' {
				b.WriteByte('%')
				i++
				continue
			}
			if !strings.ContainsRune("sdifjoOc", rune(spec)) {
				b.WriteByte('%')
				continue
			}
			v, ok := next()
			if !ok {
				b.WriteByte('%')
				continue
			}
			i++
			switch spec {
			case 's':
				b.WriteString(f.text(v))
			case 'd':
				b.WriteString(f.number(v))
			case 'i':
				b.WriteString(f.call(f.parseInt, v))
			case 'f':
				b.WriteString(f.call(f.parseFloat, v))
			case 'j', 'o', 'O':
				b.WriteString(f.json(v))
			}
		}
	} else {
		b.WriteString(f.text(args[0]))
		rest = args[1:]
	}
	for _, v := range rest {
		b.WriteByte(' ')
		b.WriteString(f.text(v))
	}
	return b.String()
}

// text shows a value as an argument of its own: strings as they are, objects as JSON.
func (f consoleFormat) text(v goja.Value) string {
	if o, ok := v.(*goja.Object); ok {
		if _, isFunc := goja.AssertFunction(o); !isFunc {
			return f.json(v)
		}
	}
	return v.String()
}

func (f consoleFormat) number(v goja.Value) string {
	if _, ok := v.(*goja.Object); ok {
		return "NaN"
	}
	return v.ToNumber().String()
}

func (f consoleFormat) call(fn goja.Callable, v goja.Value) string {
	out, err := fn(goja.Undefined(), v)
	if err != nil {
		return "NaN"
	}
	return out.String()
}

func (f consoleFormat) json(v goja.Value) string {
	out, err := f.stringify(goja.Undefined(), v)
	if err != nil {
		return "[Circular]"
	}
	if out == nil || goja.IsUndefined(out) {
		return "undefined"
	}
	return out.String()
}
