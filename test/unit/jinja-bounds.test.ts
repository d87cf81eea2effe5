/**
 * The template engine's bounds (issue #34): a render's time budget (a deadline checked at loop
 * iterations, macro calls, includes and inside filters, methods and operators), the sizes of
 * strings, lists, ints and output a template builds, the nesting of templates and the depth of
 * macro, loop and include recursion, and JavaScript's RangeErrors as sentences. Every hostile
 * template must end in the expected error class and message, naming the template and line,
 * in bounded time; the hostile templates of the issue also run in a child process, whose peak
 * memory is measured. Depths Jinja2 3.1.6 accepts (measured with python3, see limits.ts) are
 * rendered to show they still are.
 */
import { execFileSync } from 'node:child_process'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import {
  MAX_LIST_LENGTH,
  MAX_STRING_LENGTH,
  TemplateLimitError,
  TemplateRuntimeError,
  TemplateSyntaxError,
  TemplateTimeoutError,
  createJinjaEngine,
  errorPosition,
  type JinjaEngine,
} from '../../src/jinja/engine.js'
import { fromRangeError } from '../../src/jinja/limits.js'
import { errorOf } from './thrown-error.js'

function engineWith(files: Record<string, string> = {}, options: Parameters<typeof createJinjaEngine>[0] = {}): JinjaEngine {
  return createJinjaEngine({
    ...options,
    loader: {
      load(name) {
        if (!(name in files)) throw new TemplateRuntimeError(name, 'TemplateNotFound')
        return { source: files[name]! }
      },
    },
  })
}

const plain = engineWith()
const render = (source: string, context: Record<string, unknown> = {}) => plain.renderString(source, context, 'x.md.j2')

/** The error a render throws, of `type`, with the template name and line it names. */
function failure<E extends Error>(type: abstract new (...args: never[]) => E, run: () => unknown): { error: E; at: string; ms: number } {
  const started = performance.now()
  const error = errorOf(type, run)
  const ms = performance.now() - started
  const position = errorPosition(error)
  return { error, at: position ? `${position.templateName}:${position.line}` : 'nowhere', ms }
}

describe('time budget: a render past its deadline throws TemplateTimeoutError', () => {
  const budget = 100
  const timed = (source: string, context: Record<string, unknown> = {}, engine = plain) =>
    failure(TemplateTimeoutError, () => engine.renderString(source, context, 'slow.md.j2', { deadline: performance.now() + budget }))

  it('stops a long loop at the deadline, naming the template and the line of the loop', () => {
    const { error, at, ms } = timed('a\n{% for i in range(10**9) %}{{ i }}{% endfor %}')
    expect(at).toBe('slow.md.j2:2')
    expect(ms).toBeLessThan(budget + 200)
    expect(error).toBeInstanceOf(TemplateRuntimeError)
    expect(error.pythonType).toBe('TimeoutError')
    expect(error.budgetMs).toBe(budget)
    expect(error.message).toMatch(/^rendering took longer than the 100 ms it was given \(stopped after \d+ ms\)$/)
  })

  it('stops nested loops, recursive loops and macros called in a loop', () => {
    expect(timed('{% for i in range(10**5) %}{% for j in range(10**5) %}{% endfor %}{% endfor %}').ms).toBeLessThan(budget + 200)
    const recursive = '{% for x in range(10**9) recursive %}{{ loop([x + 1]) if x is odd }}{% endfor %}'
    expect(timed(recursive).ms).toBeLessThan(budget + 200)
    const macro = '{% macro m(i) %}{{ i }}{% endmacro %}\n{% for i in range(10**9) %}\n{{ m(i) }}{% endfor %}'
    const { at, ms } = timed(macro)
    expect(ms).toBeLessThan(budget + 200)
    expect(['slow.md.j2:1', 'slow.md.j2:2', 'slow.md.j2:3']).toContain(at)
  })

  it('stops work inside one filter, test, method or operator over a big value', () => {
    const words = Array.from({ length: 2_000_000 }, (_, i) => `w${(i * 7919) % 2_000_003}`)
    const numbers = Array.from({ length: 4_000_000 }, (_, i) => i)
    for (const source of [
      '{{ words | sort | first }}',
      '{{ words | map("upper") | map("lower") | map("upper") | list | length }}',
      '{{ words | unique | list | length }}',
      '{{ words | select("string") | select("string") | list | length }}',
      '{{ words | groupby("0") | length }}',
      '{{ (numbers + numbers + numbers) | sum }}',
      "{{ words[:1000000] | join(',') | length }}",
    ]) {
      const { ms } = timed(`{% for i in range(1000) %}${source}{% endfor %}`, { words, numbers })
      expect(ms, source).toBeLessThan(budget + 400)
    }
  })

  it('stops a loop of includes and of imports, and templates including each other', () => {
    const engine = engineWith({ 'item.j2': '{{ i }}', 'm.j2': '{% macro x() %}1{% endmacro %}' })
    expect(timed("{% for i in range(10**9) %}{% include 'item.j2' %}{% endfor %}", {}, engine).ms).toBeLessThan(budget + 200)
    expect(timed("{% for i in range(10**9) %}{% import 'm.j2' as m %}{{ m.x() }}{% endfor %}", {}, engine).ms).toBeLessThan(budget + 200)
  })

  it('throws at once when the deadline has passed, and again at every later check point', () => {
    const source = '{% for i in range(10**9) %}{% endfor %}'
    const { ms } = failure(TemplateTimeoutError, () => plain.renderString(source, {}, 'late.j2', { deadline: performance.now() - 1 }))
    expect(ms).toBeLessThan(100)
    // A filter that swallows the timeout cannot keep the render going.
    let swallowed = 0
    const stubborn = createJinjaEngine({
      filters: {
        stubborn: () => {
          try {
            plain.renderString('{% for i in range(10**9) %}{% endfor %}', {})
          } catch {
            swallowed++
          }
          return ''
        },
      },
    })
    const second = failure(TemplateTimeoutError, () =>
      stubborn.renderString('{% for i in range(10**9) %}{{ i | stubborn }}{% endfor %}', {}, 'outer.j2', { deadline: performance.now() + budget }),
    )
    expect(second.ms).toBeLessThan(budget + 200)
    expect(swallowed).toBeGreaterThan(0)
  })

  it('keeps the earlier deadline for a render inside a render, and none without a deadline', () => {
    const inner = createJinjaEngine()
    const outer = createJinjaEngine({ filters: { again: () => inner.renderString('{% for i in range(10**9) %}{% endfor %}', {}, 'inner.j2') } })
    const { error, at, ms } = failure(TemplateTimeoutError, () => outer.renderString('{{ 1 | again }}', {}, 'outer.j2', { deadline: performance.now() + budget }))
    expect(ms).toBeLessThan(budget + 200)
    expect(at).toBe('inner.j2:1')
    expect(error.budgetMs).toBe(budget)
    expect(render('{% for i in range(200000) %}{% endfor %}done')).toBe('done')
    expect(plain.renderString('{{ 1 + 1 }}', {}, 'x', { deadline: performance.now() + 10_000 })).toBe('2')
  })
})

describe('lazy ranges', () => {
  it('measure, index, slice and iterate huge ranges without a list', () => {
    expect(render('{{ range(10**12) | length }} {{ range(10**12)[-1] }} {{ range(10**12) | sum }} {{ range(10**12) | last }}')).toBe(
      '1000000000000 999999999999 499999999999500000000000 999999999999',
    )
    expect(render('{{ 10**11 in range(10**12) }} {{ range(10**12)[5:8] | list }} {{ range(10**12) | reverse | first }}')).toBe('True [5, 6, 7] 999999999999')
    expect(render('{% for i in range(10**12)[-3:] %}{{ i }}/{{ loop.revindex }}/{{ loop.length }} {% endfor %}')).toBe(
      '999999999997/3/3 999999999998/2/3 999999999999/1/3 ',
    )
    // A loop over a huge range makes no list: it runs until its deadline, in little memory.
    const before = process.memoryUsage().heapUsed
    const { ms } = failure(TemplateTimeoutError, () =>
      plain.renderString('{% for i in range(10**12) %}{{ loop.length if loop.first }}{% endfor %}', {}, 'x', { deadline: performance.now() + 100 }),
    )
    expect(ms).toBeLessThan(300)
    expect(process.memoryUsage().heapUsed - before).toBeLessThan(64 * 1024 * 1024)
  })

  it('refuse to become a list past the list limit, naming the range', () => {
    const { error, at } = failure(TemplateLimitError, () => render('a\n{{ range(10**12) | list }}'))
    expect(at).toBe('x.md.j2:2')
    expect(error.message).toBe('list(range(0, 1000000000000)) would make a list of 1000000000000 items, more than the limit of 16777216')
    expect(error.limit).toBe('list')
    expect(error.pythonType).toBe('MemoryError')
    expect(failure(TemplateLimitError, () => render('{{ range(10**12) | join(",") }}')).error.limit).toBe('list')
    expect(failure(TemplateLimitError, () => render('{{ range(10**12) | reverse | list }}')).error.message).toContain('range_iterator over range(999999999999, -1, -1)')
    expect(failure(TemplateLimitError, () => render('{{ [1] + (range(2**25) | list) }}')).error.limit).toBe('list')
  })
})

describe('size limits: a string, list, int or output past its bound is refused before it is made', () => {
  const limited = (source: string, context: Record<string, unknown> = {}) => failure(TemplateLimitError, () => render(source, context))

  it("names the operation, the size and the limit (`'x' * 10000000000 …`)", () => {
    const { error, at } = limited("line 1\nline 2\n{{ 'x' * 10000000000 }}")
    expect(error.message).toBe("'x' * 10000000000 would make a string of 10000000000 characters, more than the limit of 16777216")
    expect(at).toBe('x.md.j2:3')
    expect(error.max).toBe(MAX_STRING_LENGTH)
    expect(limited('{{ [0] * 10**9 }}').error.message).toBe('[0] * 1000000000 would make a list of 1000000000 items, more than the limit of 16777216')
    expect(limited('{{ 10**9 * "ab" }}').error.message).toBe("1000000000 * 'ab' would make a string of 2000000000 characters, more than the limit of 16777216")
  })

  it('refuses strings built by concatenation, widths, padding and replacement', () => {
    const cases: [string, RegExp][] = [
      ["{% set ns = namespace(s='x') %}{% for i in range(40) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}", /^joining 2 values with '~' would make a string of 33554432 characters/],
      ["{% set ns = namespace(s='x') %}{% for i in range(40) %}{% set ns.s = ns.s + ns.s %}{% endfor %}", /would make a string of 33554432 characters/],
      ["{{ 'x' | center(10**10) }}", /^center\(10000000000\) would make a string of 10000000000 characters/],
      ["{{ 'x'.ljust(10**9) }}", /^ljust\(1000000000\) would make a string/],
      ["{{ 'x'.zfill(10**9) }}", /^zfill\(1000000000\) would make a string/],
      ["{{ '%10000000000d' % 1 }}", /^formatting '%10000000000d' would make a string of 10000000000 characters/],
      ["{{ '%.*f' % (10**9, 1) }}", /^formatting '%\.\*f' would make a string of 1000000000 characters/],
      ["{{ '{:>999999999}'.format(1) }}", /^formatting with '>999999999' would make a string/],
      ["{{ '%s' | format('x' * 10**7) * 2 }}", /would make a string of 20000000 characters/],
      ["{{ ('x\n' * 1000) | indent(100000) }}", /^indent\(100000\) of 1001 lines would make a string of/],
      ["{{ ('x ' * 100000) | wordwrap(1, wrapstring='y' * 1000) }}", /^wordwrap\(1\) with a separator of 1000 characters would make a string/],
      ["{{ ('x' * 10**6) | replace('x', 'y' * 100) }}", /^replacing 'x' by 'yyyyyyyyyyyy'…\(100 characters\) in a string of 1000000 characters would make a string of 100000000 characters/],
      ["{{ ('x' * 10**6).replace('', 'y' * 100) }}", /would make a string of 101000100 characters/],
      ["{{ (['x' * 1000] * 100000) | join('y') }}", /^join\('y'\) of 100000 items would make a string of 100099999 characters/],
      ["{{ '-'.join(['x' * 1000] * 100000) }}", /^'-'\.join\(\) of 100000 strings would make a string/],
      ["{{ ('\t' * 100).expandtabs(10**6) }}", /^expandtabs\(1000000\) would make a string/],
      ['{{ lipsum(10**9) }}', /^lipsum\(1000000000, min=20, max=100\) would make a string of more than 16777216 characters/],
      ["{{ [['x' * 1000] * 10000] * 10000 }}", /^printing a list of 10000 items would make a string of more than 16777216 characters, the limit$/],
      ["{{ ([['x' * 1000] * 10000] * 10000) | tojson }}", /^writing a list of 10000 items as JSON would make a string of more than 16777216/],
      ["{{ (range(10**6) | list) | tojson(indent=100) }}", /as JSON would make a string of more than 16777216/],
    ]
    for (const [source, message] of cases) {
      const { error, at } = limited(source)
      expect(error.message, source).toMatch(message)
      expect(error.limit, source).toBe('string')
      expect(at, source).toBe('x.md.j2:1')
    }
  })

  it('refuses lists built by repetition, concatenation, batch, slice and appends', () => {
    const cases: [string, RegExp][] = [
      ['{{ [1, 2] * (2**23 + 1) }}', /^\[1, 2\] \* 8388609 would make a list of 16777218 items, more than the limit of 16777216$/],
      ['{% set a = [0] * 2**23 %}{{ (a + a + [1]) | length }}', /^a list of 16777216 items \+ \[1\] would make a list of 16777217 items/],
      ["{{ [1] | batch(10**9, 'x') | list }}", /^batch\(1000000000, 'x'\) would make a list of 1000000000 items/],
      ['{{ [1] | slice(10**9) | list }}', /^slice\(1000000000\) would make a list of 1000000000 items/],
      ['{% set a = [0] * 2**24 %}{{ a.append(1) }}', /^append to a list of 16777216 items would make a list of 16777217 items/],
      ['{% set a = [0] * 2**24 %}{{ a.extend([1]) }}', /^extend a list of 16777216 items by \[1\] would make a list of 16777217 items/],
    ]
    for (const [source, message] of cases) {
      const { error } = limited(source)
      expect(error.message, source).toMatch(message)
      expect(error.limit, source).toBe('list')
      expect(error.max).toBe(MAX_LIST_LENGTH)
    }
  })

  it('refuses an output past the limit and an int past its bits', () => {
    const { error, at } = limited("{% set s = 'x' * 2**20 %}\n{% for i in range(100) %}\n{{ s }}\n{% endfor %}")
    expect(error.message).toMatch(/^the output grew to 167772\d\d characters, more than the limit of 16777216$/)
    expect(error.limit).toBe('output')
    expect(at).toBe('x.md.j2:3')
    const big = limited('{% set ns = namespace(x=3) %}{% for i in range(100) %}{% set ns.x = ns.x * ns.x %}{% endfor %}').error
    expect(big.limit).toBe('integer')
    expect(big.message).toMatch(/^multiplying two integers of 830980 and 830980 bits would make an integer of about 1661960 bits, more than the limit of 1048576$/)
    expect(limited('{{ (2 ** 1000000) ** 999999 }}').error.message).toMatch(/^an integer of 301030 digits \*\* 999999 would make an integer of about/)
    expect(render('{{ (2 ** 10000) % 7 }} {{ 2 ** -1000000000 }} {{ ("9" * 5000) | int }}')).toBe('2 0.0 0')
  })

  it('lets sizes up to the limits through', () => {
    expect(render("{{ ('x' * 16777216) | length }}")).toBe('16777216')
    expect(render('{{ ([0] * 16777216) | length }}')).toBe('16777216')
    expect(render("{{ ('ab' * 1000) | center(3000) | length }}")).toBe('3000')
  })
})

describe('nesting bounds: a template nesting deeper than Jinja allows is a TemplateSyntaxError, never a stack overflow', () => {
  const syntax = (source: string) => failure(TemplateSyntaxError, () => render(source))

  it('refuses 100,000 nested brackets, braces, unary operators, filters and tags at their line', () => {
    const cases: [string, string][] = [
      ['a\n\n{{ ' + '('.repeat(100_000) + '1' + ')'.repeat(100_000) + ' }}', 'expressions nest more than 500 levels deep'],
      ['{{ ' + '['.repeat(100_000) + ']'.repeat(100_000) + ' }}', 'expressions nest more than 500 levels deep'],
      ['{{ ' + '{"a": '.repeat(100_000) + '1' + '}'.repeat(100_000) + ' }}', 'expressions nest more than 500 levels deep'],
      ['{{ ' + 'f('.repeat(100_000) + '1' + ')'.repeat(100_000) + ' }}', 'expressions nest more than 500 levels deep'],
      ['{{ ' + '-'.repeat(100_000) + '1 }}', 'expressions nest more than 500 levels deep'],
      ['{{ ' + 'not '.repeat(100_000) + '1 }}', 'expressions nest more than 500 levels deep'],
      ['{{ 1' + ' + 1'.repeat(100_000) + ' }}', 'expressions nest more than 500 levels deep'],
      ['{{ 1' + ' if 1 else 1'.repeat(100_000) + ' }}', 'expressions nest more than 500 levels deep'],
      ['{{ x' + '|abs'.repeat(100_000) + ' }}', 'expressions nest more than 500 levels deep'],
      ['{{ x' + '.real'.repeat(100_000) + ' }}', 'expressions nest more than 500 levels deep'],
      ['{% if 1 %}'.repeat(100_000) + '{% endif %}'.repeat(100_000), 'tags nest more than 500 levels deep'],
      ['{% for a in b %}'.repeat(100_000) + '{% endfor %}'.repeat(100_000), 'tags nest more than 500 levels deep'],
    ]
    for (const [source, message] of cases) {
      const { error, at, ms } = syntax(source)
      expect(error.message, source.slice(0, 20)).toBe(message)
      expect(at, source.slice(0, 20)).toBe(source.startsWith('a\n\n') ? 'x.md.j2:3' : 'x.md.j2:1')
      expect(ms).toBeLessThan(2000)
    }
  })

  it('names the line where the nesting goes too deep', () => {
    const source = 'a\n{% if 1 %}\n{{ ' + '['.repeat(300) + '\n' + '['.repeat(300) + ']'.repeat(600) + ' }}\n{% endif %}'
    expect(syntax(source).at).toBe('x.md.j2:4')
  })

  it('accepts every depth Jinja2 3.1.6 accepts (measured with python3 on its default recursion limit)', () => {
    const f = (v: unknown) => v
    const accepted: [string, string][] = [
      ['{{ ' + '('.repeat(69) + '1' + ')'.repeat(69) + ' }}', '1'],
      ['{{ ' + '['.repeat(75) + ']'.repeat(75) + ' | length }}', '1'],
      ['{{ ' + '{"a": '.repeat(74) + '1' + '}'.repeat(74) + ' | length }}', '1'],
      ['{{ ' + 'f('.repeat(69) + '1' + ')'.repeat(69) + ' }}', '1'],
      ['{{ 1' + '+1'.repeat(491) + ' }}', '492'],
      ['{{ ' + '-'.repeat(490) + '1 }}', '1'],
      ['{{ ' + 'not '.repeat(490) + '1 }}', 'True'],
      ['{{ 1' + ' if 1 else 1'.repeat(491) + ' }}', '1'],
      ['{{ -1' + '|abs'.repeat(197) + ' }}', '1'],
      ['{{ 1' + '.real'.repeat(197) + ' }}', '1'],
      ['{% with %}'.repeat(246) + 'w' + '{% endwith %}'.repeat(246), 'w'],
      ['{% if 1 %}'.repeat(98) + 'i' + '{% endif %}'.repeat(98), 'i'],
      ['{{ 1' + ' < 2'.repeat(20_000) + ' }}', 'False'],
      ['{{ (1' + ' ~ 1'.repeat(20_000) + ') | length }}', '20001'],
      ['{% if x == 0 %}a' + Array.from({ length: 2980 }, (_, i) => `{% elif x == ${i + 1} %}b${i + 1}`).join('') + '{% endif %}', 'b2980'],
    ]
    for (const [source, output] of accepted) expect(render(source, { f, x: 2980 }), source.slice(0, 30)).toBe(output)
  })
})

describe('recursion bounds: runaway recursion is a TemplateLimitError naming the macro or template', () => {
  const limited = (run: () => unknown) => failure(TemplateLimitError, run)

  it('refuses a macro that recurses without end, directly or through another', () => {
    const { error, at } = limited(() => render('{% macro walk(n) %}\n{{ walk(n + 1) }}\n{% endmacro %}\n{{ walk(0) }}'))
    expect(error.message).toBe("macro 'walk' called itself more than 500 levels deep")
    expect(error.limit).toBe('macro-depth')
    expect(error.pythonType).toBe('RecursionError')
    expect(at).toBe('x.md.j2:2')
    const mutual = limited(() => render('{% macro a() %}{{ b() }}{% endmacro %}{% macro b() %}{{ a() }}{% endmacro %}{{ a() }}')).error
    expect(mutual.message).toMatch(/^macro '[ab]' called itself more than 500 levels deep$/)
    const caller = limited(() => render('{% macro m() %}{% call m() %}x{% endcall %}{{ caller() }}{% endmacro %}{% call m() %}y{% endcall %}')).error
    expect(caller.message).toBe("macro 'm' called itself more than 500 levels deep")
  })

  it('refuses a recursive loop that calls loop() without end', () => {
    const { error, at } = limited(() => render('x\n{% for item in [1] recursive %}{{ loop([item]) }}{% endfor %}'))
    expect(error.message).toBe('a recursive loop called loop() more than 500 levels deep')
    expect(at).toBe('x.md.j2:2')
  })

  it('refuses a template that includes, imports or extends itself, directly or in a cycle', () => {
    const engine = engineWith({
      'self.j2': "x\n{% include 'self.j2' %}",
      'a.j2': "{% include 'b.j2' %}",
      'b.j2': "{% include 'a.j2' %}",
      'ext.j2': "{% extends 'ext.j2' %}",
      'p.j2': "{% extends 'q.j2' %}",
      'q.j2': "{% extends 'p.j2' %}",
      'imp.j2': "{% import 'imp.j2' as m %}",
      'from.j2': "{% from 'from.j2' import x %}",
    })
    const cases: [string, RegExp, RegExp][] = [
      ['self.j2', /^template 'self\.j2' includes itself more than 1000 levels deep$/, /^self\.j2:2$/],
      ['a.j2', /^template '[ab]\.j2' includes itself more than 1000 levels deep$/, /^[ab]\.j2:1$/],
      ['ext.j2', /^template 'ext\.j2' extends itself more than 1000 levels deep$/, /^ext\.j2:1$/],
      ['p.j2', /^template '[pq]\.j2' extends itself more than 1000 levels deep$/, /^[pq]\.j2:1$/],
      ['imp.j2', /^template 'imp\.j2' imports itself more than 1000 levels deep$/, /^imp\.j2:1$/],
      ['from.j2', /^template 'from\.j2' imports itself more than 1000 levels deep$/, /^from\.j2:1$/],
    ]
    for (const [name, message, at] of cases) {
      const result = limited(() => engine.render(name, {}))
      expect(result.error.message, name).toMatch(message)
      expect(result.error.limit, name).toBe('template-depth')
      expect(result.at, name).toMatch(at)
      expect(result.ms, name).toBeLessThan(2000)
    }
  })

  it('keeps recursion with a base case working as deep as Jinja2 allows (macro 247, loop 247, include 988, import 246)', () => {
    expect(render('{% macro walk(n) %}{% if n > 0 %}{{ walk(n - 1) }}{% else %}end{% endif %}{% endmacro %}{{ walk(499) }}')).toBe('end')
    expect(render('{% for item in [499] recursive %}{% if item > 0 %}{{ loop([item - 1]) }}{% else %}end{% endif %}{% endfor %}')).toBe('end')
    const engine = engineWith({
      'main.j2': "{% include 'inc.j2' %}",
      'inc.j2': "{% if n > 0 %}{% with n = n - 1 %}{% include 'inc.j2' %}{% endwith %}{% else %}end{% endif %}",
      'imain.j2': "{% import 'm.j2' as m %}{{ m.walk(n) }}",
      'm.j2': "{% macro walk(n) %}{% if n > 0 %}{% import 'm.j2' as mm %}{{ mm.walk(n - 1) }}{% else %}end{% endif %}{% endmacro %}",
    })
    expect(engine.render('main.j2', { n: 998 })).toBe('end')
    expect(engine.render('imain.j2', { n: 498 })).toBe('end')
  })
})

describe("JavaScript's RangeErrors become sentences at the template's position", () => {
  it('a value nested too deeply to print (a stack overflow)', () => {
    const source = '{% set ns = namespace(x=[]) %}{% for i in range(300000) %}{% set ns.x = [ns.x] %}{% endfor %}\n{{ ns.x }}'
    const { error, at } = failure(TemplateLimitError, () => render(source))
    expect(error.message).toBe('the template nests or recurses too deeply: the stack of the renderer ran out')
    expect(error.limit).toBe('stack')
    expect(at).toBe('x.md.j2:2')
    expect(error.cause).toBeInstanceOf(RangeError)
  })

  it('other RangeErrors, never with JavaScript’s message', () => {
    const { error } = failure(TemplateLimitError, () => render("{{ '%c' % 2000000 }}"))
    expect(error.message).toBe('a number is out of the range the operation accepts')
    expect((fromRangeError(new RangeError('Invalid string length')) as Error).message).toMatch(/^a string grew past what the renderer can hold/)
    expect((fromRangeError(new RangeError('Invalid array length')) as Error).message).toMatch(/^a list grew past what the renderer can hold/)
    const other = new TypeError('x')
    expect(fromRangeError(other)).toBe(other)
  })
})

describe('the hostile templates of issue #34 in a child process', () => {
  it('each ends in its error class and message within 2 s (the loop within its deadline + 200 ms), the process alive, peak RSS under 1 GiB', () => {
    const script = path.resolve(__dirname, '../fixtures/jinja-hostile/render-hostile.ts')
    const output = execFileSync(process.execPath, ['--import', 'tsx', script], { encoding: 'utf8', timeout: 60_000 })
    const lines = output.trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>)
    const byName = Object.fromEntries(lines.filter((line) => 'name' in line).map((line) => [line.name, line]))
    const expected: Record<string, [string, string, number]> = {
      brackets: ['TemplateSyntaxError', 'expressions nest more than 500 levels deep', 2],
      'range-list': ['TemplateLimitError', 'list(range(0, 1000000000000)) would make a list of 1000000000000 items, more than the limit of 16777216', 3],
      'string-repeat': ['TemplateLimitError', "'x' * 10000000000 would make a string of 10000000000 characters, more than the limit of 16777216", 4],
      'macro-recursion': ['TemplateLimitError', "macro 'walk' called itself more than 500 levels deep", 2],
      'self-include': ['TemplateLimitError', "template 'self.md.j2' includes itself more than 1000 levels deep", 2],
      'long-loop': ['TemplateTimeoutError', 'rendering took longer than the 200 ms it was given', 1],
    }
    for (const [name, [errorName, message, line]] of Object.entries(expected)) {
      const result = byName[name]!
      expect(result, name).toBeDefined()
      expect(result.errorName, name).toBe(errorName)
      expect(String(result.message), name).toContain(message)
      expect(result.line, name).toBe(line)
      expect(result.templateName, name).toBe(name === 'self-include' ? 'self.md.j2' : 'x.md.j2')
      expect(result.elapsedMs as number, name).toBeLessThan(name === 'long-loop' ? 400 : 2000)
    }
    const peak = lines.find((line) => 'maxRssMiB' in line)!.maxRssMiB as number
    expect(peak).toBeLessThan(1024)
  })
})
