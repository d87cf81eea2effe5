/**
 * The generated reference pages' transforms: `options-reference`, `cli-reference`,
 * `capabilities-reference`, `config-reference` and `sdk-reference`. Each reads the repository's
 * own definitions (the options' JSDoc, the command line's --help and command table, the builtins'
 * option reads, the zod schema of `insitu.toml`, the SDK's declarations) and reports every file it
 * read as a `repo:<path>` dependency (repo.mjs).
 * A definition that cannot be read the way this expects fails the region, naming what is missing,
 * so the docs cannot silently drift from the code.
 */
import { execFileSync } from 'node:child_process'
import path from 'node:path'
import { createRequire } from 'node:module'
import fs from 'node:fs'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { code, interfaceMembers, parseJsDoc, readRepo, repoRoot } from './repo.mjs'

const HERE = path.dirname(fileURLToPath(import.meta.url))

/** A `@default` text: code when it is one token, else prose as written (it may hold code spans). */
function defaultText(text) {
  return /`/.test(text) || /\s/.test(text) ? text : code(text)
}

// ---------------------------------------------------------------------------------------------
// options-reference

export function optionsReference(params, ctx) {
  const source = readRepo(ctx, params.file)
  const members = interfaceMembers(source, params.interface)
  const known = /const KNOWN = new Set\(\[([^\]]*)\]\)/.exec(source)
  if (known && params.interface === 'InsituOptions') {
    const names = [...known[1].matchAll(/'(\w+)'/g)].map((m) => m[1])
    const documented = members.map((m) => m.name)
    const differ = [...names.filter((n) => !documented.includes(n)), ...documented.filter((n) => !names.includes(n))]
    if (differ.length > 0) throw new Error(`${params.file}: KNOWN and ${params.interface} differ on ${differ.join(', ')}`)
  }
  const hashes = '#'.repeat(params.level)
  const sections = members.map((member) => {
    const lines = [`${hashes} ${code(member.name)}`, '', `- Type: ${code(member.type)}`]
    if (!member.optional) lines.push('- Required')
    if (member.doc.tags.default !== undefined) lines.push(`- Default: ${defaultText(member.doc.tags.default)}`)
    // Deprecated: a fact in the list, then what to use instead as the first paragraph.
    if (member.doc.tags.deprecated !== undefined) lines.push('- Deprecated')
    if (member.doc.tags.deprecated) lines.push('', member.doc.tags.deprecated)
    if (member.doc.text) lines.push('', member.doc.text)
    const nested = /^(\w+)(?:\[\])?$/.exec(member.type)?.[1]
    if (nested && new RegExp(`^export interface ${nested}\\b`, 'm').test(source)) {
      lines.push('', `Each ${code(nested)}:`, '')
      for (const field of interfaceMembers(source, nested)) {
        const facts = [code(field.type), field.optional ? null : 'required']
        if (field.doc.tags.default !== undefined) facts.push(`default ${defaultText(field.doc.tags.default)}`)
        lines.push(`- ${code(field.name)} (${facts.filter(Boolean).join(', ')}): ${field.doc.text.replace(/\n/g, ' ')}`)
      }
    }
    if (member.doc.tags.example !== undefined) lines.push('', member.doc.tags.example)
    return lines.join('\n')
  })
  return sections.join('\n\n')
}

// ---------------------------------------------------------------------------------------------
// cli-reference

function helpText(ctx) {
  const root = repoRoot(ctx)
  const manifest = JSON.parse(readRepo(ctx, 'package.json'))
  const bin = Object.values(manifest.bin)[0]
  ctx.dependOn(`repo:${bin.replace(/^\.\//, '')}`)
  try {
    return execFileSync(process.execPath, [path.join(root, bin), '--help'], { encoding: 'utf8', cwd: root }).replace(/\s+$/, '')
  } catch (error) {
    throw new Error(`${bin} --help failed (run npm run build first): ${error.message}`)
  }
}

/** The entries of a help section: `{ head, text }`, continuation lines joined. */
function helpEntries(help, title, isHead) {
  const lines = help.split('\n')
  const start = lines.indexOf(`${title}:`)
  if (start < 0) throw new Error(`--help has no "${title}:" section`)
  const entries = []
  for (const line of lines.slice(start + 1)) {
    if (line.trim() === '') break
    const head = isHead(line)
    if (head) entries.push({ head: head[1], text: head[2] ?? '' })
    else if (entries.length > 0) entries.at(-1).text = `${entries.at(-1).text} ${line.trim()}`.trim()
  }
  return entries
}

function commandOptions(ctx) {
  const source = readRepo(ctx, 'src/cli/main.ts')
  const consts = new Map()
  for (const m of source.matchAll(/^const (\w+) = (\{[\s\S]*?\}) as const/gm)) consts.set(m[1], m[2])
  const keysOf = (text) =>
    [...text.matchAll(/\.\.\.(\w+)|'(--?[\w-]+)'/g)].flatMap((m) => (m[1] ? keysOf(consts.get(m[1]) ?? '') : [m[2]]))
  const list = source.slice(source.indexOf('export const COMMANDS'))
  const chunks = list.split(/\n\s*\{\n\s*name: '/).slice(1)
  return new Map(
    chunks.map((chunk) => {
      const name = chunk.slice(0, chunk.indexOf("'"))
      const options = chunk.slice(chunk.indexOf('options:'), chunk.indexOf('usage:'))
      const value = options.replace(/^options:\s*/, '').trim().replace(/,$/, '')
      return [name, keysOf(/^\w+$/.test(value) ? `...${value}` : value)]
    }),
  )
}

/**
 * The values each option of src/cli/main.ts accepts, when it lists them (`choices: [...]`, or a
 * constant imported from another file of src/cli): `--format` → ['text', 'json', 'github'].
 */
function optionChoices(ctx) {
  const source = readRepo(ctx, 'src/cli/main.ts')
  const choices = new Map()
  for (const m of source.matchAll(/'(--?[\w-]+)':\s*\{[^}]*\bchoices:\s*(\[[^\]]*\]|\w+)/g)) {
    let list = m[2]
    if (!list.startsWith('[')) {
      const from = new RegExp(`import \\{[^}]*\\b${list}\\b[^}]*\\} from '\\./([\\w-]+)\\.js'`).exec(source)
      const file = from ? `src/cli/${from[1]}.ts` : 'src/cli/main.ts'
      const defined = new RegExp(`const ${list}\\b[^=]*=\\s*(\\[[^\\]]*\\])`).exec(from ? readRepo(ctx, file) : source)
      if (!defined) throw new Error(`${file}: no array ${list} (the choices of ${m[1]})`)
      list = defined[1]
    }
    choices.set(m[1], [...list.matchAll(/'([^']*)'/g)].map((c) => c[1]))
  }
  return choices
}

export function cliReference(params, ctx) {
  const help = helpText(ctx)
  if (params.part === 'help') return ['```text', help, '```'].join('\n')
  const cli = JSON.parse(readRepo(ctx, 'package.json')).name
  const commands = helpEntries(help, 'Commands', (line) => /^ {2}(\S.*?)(?: {2,}(\S.*))?$/.exec(line))
  const options = helpEntries(help, 'Options', (line) => /^ {2}(-\S.*?) {2,}(\S.*)$/.exec(line)).map((entry) => ({
    names: entry.head.split(/,\s*/).map((name) => name.split(' ')[0]),
    head: entry.head,
    text: entry.text.replace(/^[a-z]+(?:, [a-z]+)*: /, ''),
  }))
  const table = commandOptions(ctx)
  const choices = optionChoices(ctx)
  const placeholders = new Set(commands.flatMap((c) => c.head.match(/\b[A-Z]{2,}\b/g) ?? []))
  const hashes = '#'.repeat(params.level)
  const out = []
  for (const command of commands) {
    const name = [...table.keys()].find((n) => command.head === n || command.head.startsWith(`${n} `))
    if (!name) throw new Error(`--help lists ${command.head}, which src/cli/main.ts's COMMANDS does not define`)
    const inSynopsis = (flag) => command.head.split(/[\s[\]]+/).includes(flag)
    // An option of one command only (init --force) is in its synopsis and summary, not under Options.
    const own = table.get(name).flatMap((flag) => {
      if (inSynopsis(flag)) return []
      const option = options.find((o) => o.names.includes(flag))
      if (!option) throw new Error(`${name} takes ${flag}, which --help does not describe`)
      return [option]
    })
    const synopsis = [cli, command.head, ...own.map((o) => `[${o.head}]`)]
    out.push(`${hashes} ${code(name)}`, '', prose(sentence(command.text), placeholders), '', '```sh', synopsis.join(' '), '```')
    if (own.length > 0) {
      out.push('')
      for (const option of own) {
        // The values an option takes are code (`text` (default), `json` …); prose starts with a capital.
        const words = new Set([...placeholders, ...option.names.flatMap((name) => choices.get(name) ?? [])])
        out.push(`- ${code(option.head)}: ${prose(sentence(option.text), words).replace(/^[a-z]/, (c) => c.toUpperCase())}`)
      }
    }
    out.push('')
  }
  const missing = [...table.keys()].filter((name) => !commands.some((c) => c.head === name || c.head.startsWith(`${name} `)))
  if (missing.length > 0) throw new Error(`--help does not list ${missing.join(', ')}`)
  return out.join('\n').trim()
}

function sentence(text) {
  const trimmed = text.trim()
  return /\.$/.test(trimmed) ? trimmed : `${trimmed}.`
}

/**
 * Help text as Markdown prose: a token that is a file, a path, a URL form, a version range, an
 * option or a placeholder (`DIR`, `<ms>`) becomes inline code, so nothing in it reads as HTML.
 */
function prose(text, placeholders) {
  return text
    .split(' ')
    .map((token) => {
      const [, lead, core, trail] = /^(\(?)(.*?)([,;:.)]*)$/.exec(token)
      const looksCode = /^-/.test(core) || /[./:<>[\]=^@#]/.test(core) || placeholders.has(core)
      return looksCode && core !== '' ? `${lead}${code(core)}${trail}` : token
    })
    .join(' ')
}

// ---------------------------------------------------------------------------------------------
// capabilities-reference

const READERS = {
  requiredString: 'string',
  optionalString: 'string',
  optionalBoolean: 'boolean',
  optionalInteger: 'integer',
  optionalStringArray: 'array of strings',
  optionalTable: 'table',
}

/** Every builtin capability defined in src/builtins: kind, name, and the options its code reads. */
function builtinDefinitions(ctx) {
  const index = readRepo(ctx, 'src/builtins/index.ts')
  const files = [...index.matchAll(/from '\.\/([\w-]+)\.js'/g)].map((m) => `src/builtins/${m[1]}.ts`)
  const found = []
  for (const file of files) {
    const source = readRepo(ctx, file)
    const starts = [...source.matchAll(/kind: '(\w+)',\s*name: '([\w-]+)'/g)]
    starts.forEach((start, i) => {
      const body = source.slice(start.index, starts[i + 1]?.index ?? source.length)
      const options = []
      const reads = new RegExp(`(${Object.keys(READERS).join('|')})\\((?:request\\.)?(?:options|opts), '(\\w+)', ([^)]*)\\)(?:\\s*(\\?\\?|\\|\\|)\\s*([^\\n)]+))?`, 'g')
      for (const m of body.matchAll(reads)) {
        const args = m[3].split(/,\s*/)
        const option = { name: m[2], type: READERS[m[1]], required: m[1] === 'requiredString', missing: null, range: null, fallback: null }
        if (option.required) option.missing = args[0].replace(/^MODEL_REQUIRED$/, () => /MODEL_REQUIRED = '([^']*)'/.exec(source)?.[1] ?? '').replace(/^'|'$/g, '')
        if (m[1] === 'optionalInteger') option.range = [Number(args[1]), args[2] === undefined ? null : Number(args[2])]
        if (m[4] === '??') option.fallback = m[5].trim().replace(/^'(.*)'$/, '$1')
        if (m[1] === 'optionalStringArray') option.fallback = '[]'
        if (m[1] === 'optionalTable') option.fallback = '{}'
        if (!options.some((o) => o.name === option.name)) options.push(option)
      }
      const handsOn = /materializeWith\(\{[^}]*source: '(\w+)', renderer: '(\w+)'/.exec(body)
      found.push({ kind: start[1], name: start[2], file, options, handsOn: handsOn ? { source: handsOn[1], renderer: handsOn[2] } : null })
    })
  }
  return found
}

function typeText(option) {
  if (option.type !== 'integer' || !option.range) return option.type
  const [min, max] = option.range
  return max === null || max === Number.MAX_SAFE_INTEGER ? `integer ≥ ${min}` : `integer ${min} to ${max}`
}

/** The repository's own TOML parser (smol-toml, a dependency of the plugin). */
async function parseToml(text, ctx) {
  const file = createRequire(path.join(repoRoot(ctx), 'package.json')).resolve('smol-toml')
  return (await import(pathToFileURL(file).href)).parse(text)
}

export async function capabilitiesReference(params, ctx) {
  const descriptions = await parseToml(fs.readFileSync(path.join(HERE, 'capabilities.toml'), 'utf8'), ctx)
  // In the order capabilities.toml lists them (kinds, then names).
  const rank = (b) => Object.keys(descriptions).indexOf(b.kind) * 1000 + Object.keys(descriptions[b.kind] ?? {}).indexOf(b.name)
  const builtins = builtinDefinitions(ctx).sort((a, b) => rank(a) - rank(b))
  const oneLine = (text) => text.trim().replace(/\s*\n\s*/g, ' ')
  const keys = readRepo(ctx, 'src/builtins/option-keys.ts')
  const templates = [...readRepo(ctx, 'src/builtins/jinja.ts').matchAll(/^ {2}'(@insitu\/[\w-]+)':/gm)].map((m) => m[1])
  const hashes = '#'.repeat(params.level)
  const out = []
  for (const builtin of builtins) {
    const key = `${builtin.kind}.${builtin.name}`
    const about = descriptions[builtin.kind]?.[builtin.name]
    if (!about) throw new Error(`${builtin.file} defines ${builtin.kind} ${builtin.name}, which capabilities.toml does not describe`)
    const optionDocs = about.options ?? {}
    out.push(`${hashes} ${code(builtin.name)} ${builtin.kind}`, '', about.summary.trim())
    const listed = new Set()
    const lines = []
    for (const option of builtin.options) {
      const doc = optionDocs[option.name]
      if (!doc) throw new Error(`${builtin.file}: ${key} reads option ${option.name}, which capabilities.toml does not describe`)
      listed.add(option.name)
      const facts = [typeText(option)]
      if (option.required) facts.push('required')
      const fallback = doc.default ?? (option.fallback === null ? null : code(option.fallback))
      if (fallback) facts.push(`default ${fallback}`)
      let text = oneLine(doc.text)
      if (option.missing) text += ` Without it: ${code(option.missing)}.`
      lines.push(`- ${code(option.name)} (${facts.join(', ')}): ${text}`)
    }
    for (const [name, doc] of Object.entries(optionDocs)) {
      if (listed.has(name)) continue
      if (!doc.handed_on) throw new Error(`capabilities.toml describes option ${name} of ${key}, which ${builtin.file} does not read`)
      const facts = [doc.type, doc.default ? `default ${doc.default}` : null].filter(Boolean)
      lines.push(`- ${code(name)} (${facts.join(', ')}): ${oneLine(doc.text)}`)
      listed.add(name)
    }
    const knownKeys = new RegExp(`^ {2}${builtin.name}: \\[([^\\]]*)\\]`, 'm').exec(keys)
    if (builtin.kind === 'transform' && knownKeys) {
      const expected = [...knownKeys[1].matchAll(/'(\w+)'/g)].map((m) => m[1])
      const differ = [...expected.filter((k) => !listed.has(k)), ...[...listed].filter((k) => !expected.includes(k))]
      if (differ.length > 0) throw new Error(`option-keys.ts and the ${builtin.name} transform's documented options differ on ${differ.join(', ')}`)
    }
    if (lines.length > 0) out.push('', 'Options:', '', ...lines)
    if (builtin.handsOn) out.push('', `Runs the ${code(builtin.handsOn.source)} resource and renders its rows with the ${code(builtin.handsOn.renderer)} renderer, handing both every option.`)
    if (builtin.kind === 'renderer' && builtin.name === 'jinja') {
      out.push('', 'Builtin templates:', '')
      for (const name of templates) {
        const doc = descriptions.templates?.[name]
        if (!doc) throw new Error(`capabilities.toml does not describe the builtin template ${name}`)
        out.push(`- ${code(name)}: ${oneLine(doc)}`)
      }
    }
    if (about.more) out.push('', about.more.trim())
    out.push('')
  }
  for (const [kind, byName] of Object.entries(descriptions)) {
    if (kind === 'templates') continue
    for (const name of Object.keys(byName)) {
      if (!builtins.some((b) => b.kind === kind && b.name === name)) throw new Error(`capabilities.toml describes ${kind} ${name}, which src/builtins does not define`)
    }
  }
  return out.join('\n').trim()
}

// ---------------------------------------------------------------------------------------------
// config-reference

/**
 * Calls `visit(i, c, depth)` for each character of `text` from `start` that is outside string
 * literals and no bracket (`depth`: brackets open around it); stops where `visit` returns true.
 * Returns that index, or `text.length`.
 */
function scanTop(text, start, visit) {
  let depth = 0
  let quote = null
  for (let i = start; i < text.length; i++) {
    const c = text[i]
    if (quote) {
      if (c === '\\') i++
      else if (c === quote) quote = null
      continue
    }
    if (c === "'" || c === '"' || c === '`') quote = c
    else if ('([{'.includes(c)) depth++
    else if (')]}'.includes(c)) depth--
    else if (visit(i, c, depth)) return i
  }
  return text.length
}

/** The JavaScript expression starting at `start`: up to a newline at depth 0 not followed by `.`. */
function readExpression(source, start) {
  const end = scanTop(source, start, (i, c, depth) => depth === 0 && c === '\n' && !/^\s*\./.test(source.slice(i + 1)))
  return source.slice(start, end).trim()
}

/** The expression a `const name = …` of the source holds. */
function constExpression(source, name) {
  const at = new RegExp(`^(?:export )?const ${name}\\b[^=\\n]*= `, 'm').exec(source)
  if (!at) throw new Error(`src/host/config.ts: no const ${name}`)
  return readExpression(source, at.index + at[0].length)
}

/** Split `text` at top-level `sep` characters (outside brackets and strings). */
function splitTop(text, sep) {
  const parts = []
  let from = 0
  scanTop(text, 0, (i, c, depth) => {
    if (depth === 0 && c === sep) {
      parts.push(text.slice(from, i))
      from = i + 1
    }
    return false
  })
  parts.push(text.slice(from))
  return parts.map((part) => part.trim()).filter((part) => part !== '')
}

/** `a.b(x).c(y)` as `{ head: 'a', calls: [{ name: 'b', args: 'x' }, …] }`. */
function callChain(expr) {
  const head = /^[\w$]+/.exec(expr)
  if (!head) throw new Error(`src/host/config.ts: cannot read the schema expression ${expr}`)
  const calls = []
  let i = head[0].length
  while (i < expr.length) {
    const member = /^\s*\.\s*([\w$]+)/.exec(expr.slice(i))
    if (!member) throw new Error(`src/host/config.ts: cannot read the schema expression ${expr}`)
    i += member[0].length
    let args = null
    if (expr[i] === '(') {
      let depth = 0
      let j = i
      for (; j < expr.length; j++) {
        if (expr[j] === '(') depth++
        else if (expr[j] === ')' && --depth === 0) break
      }
      args = expr.slice(i + 1, j).trim()
      i = j + 1
    }
    calls.push({ name: member[1], args })
  }
  return { head: head[0], calls }
}

/** A JavaScript literal of the schema (strings, numbers, booleans, arrays, `{}`, `...CONST`, `() => x`) as a value. */
function literalValue(text, source) {
  const t = text.trim().replace(/^\(\)\s*=>\s*/, '')
  if (/^'(?:[^'\\]|\\.)*'$/.test(t)) return t.slice(1, -1).replace(/\\(.)/g, '$1')
  if (/^-?\d+(?:\.\d+)?$/.test(t)) return Number(t)
  if (t === 'true' || t === 'false') return t === 'true'
  if (t === '{}') return {}
  if (t.startsWith('[') && t.endsWith(']')) {
    return splitTop(t.slice(1, -1), ',').flatMap((item) =>
      item.startsWith('...') ? literalValue(constExpression(source, item.slice(3)), source) : [literalValue(item, source)],
    )
  }
  if (/^[A-Z_]+$/.test(t)) return literalValue(constExpression(source, t), source)
  throw new Error(`src/host/config.ts: cannot read the value ${t}`)
}

/** A value as TOML. */
function tomlValue(value) {
  if (Array.isArray(value)) return `[${value.map(tomlValue).join(', ')}]`
  if (typeof value === 'string') return JSON.stringify(value)
  if (value && typeof value === 'object') return '{}'
  return String(value)
}

/** The messages of the `ruleIssue(…)` calls in a `.superRefine(…)`: `${p}` becomes `<p>`. */
function ruleMessages(args) {
  return [...args.matchAll(/ruleIssue\(\s*(['`])((?:(?!\1)[^\\]|\\.)*)\1/g)].map((m) => m[2].replace(/\$\{\s*(\w+)\s*\}/g, '<$1>'))
}

/**
 * A zod schema expression of src/host/config.ts as `{ type, table?, item?, min, max, only,
 * defaultValue, hasDefault, optional, rules }`; a table (`z.strictObject` / `z.object`) has
 * `table = { strict, keys: Map<name, schema> }`. Named schemas (`ProjectPath`) are followed.
 */
function zodSchema(expr, source) {
  const { head, calls } = callChain(expr)
  let schema
  let rest = calls
  if (head === 'z') {
    const [base, ...more] = calls
    rest = more
    const simple = { string: 'string', boolean: 'boolean', int: 'integer', number: 'number' }
    schema = { min: null, max: null, only: null, hasDefault: false, defaultValue: undefined, optional: false, rules: [] }
    if (simple[base.name]) schema.type = simple[base.name]
    else if (base.name === 'literal') {
      schema.only = literalValue(base.args, source)
      schema.type = typeof schema.only === 'number' ? (Number.isInteger(schema.only) ? 'integer' : 'number') : typeof schema.only
    } else if (base.name === 'array') {
      schema.item = zodSchema(base.args, source)
      schema.type = 'array'
    } else if (base.name === 'strictObject' || base.name === 'object') {
      const body = base.args.replace(/^\{|\}$/g, '')
      const keys = new Map()
      for (const entry of splitTop(body, ',')) {
        const m = /^(\w+)\s*:\s*([\s\S]+)$/.exec(entry)
        if (!m) throw new Error(`src/host/config.ts: cannot read the key ${entry}`)
        keys.set(m[1], zodSchema(m[2], source))
      }
      schema.type = 'table'
      schema.table = { strict: base.name === 'strictObject', keys }
    } else throw new Error(`src/host/config.ts: config-reference does not know z.${base.name}`)
  } else {
    schema = structuredClone(zodSchema(constExpression(source, head), source))
  }
  for (const call of rest) {
    if (call.name === 'min') schema.min = Number(call.args)
    else if (call.name === 'max') schema.max = Number(call.args)
    else if (call.name === 'default' || call.name === 'prefault') {
      schema.hasDefault = true
      schema.defaultValue = literalValue(call.args, source)
    } else if (call.name === 'optional') schema.optional = true
    else if (call.name === 'superRefine') schema.rules.push(...ruleMessages(call.args))
    else if (call.name !== 'transform') throw new Error(`src/host/config.ts: config-reference does not know .${call.name}()`)
  }
  return schema
}

/** `integer 0 to 10000`, `non-empty string`, `array of strings`, … */
function schemaType(schema) {
  if (schema.type === 'array') {
    const item = schemaType(schema.item)
    return `array of ${item === 'table' ? 'tables' : `${item}s`}`
  }
  if (schema.only !== null) return `${schema.type}, only ${code(tomlValue(schema.only))}`
  if (schema.type === 'integer' && (schema.min !== null || schema.max !== null)) {
    if (schema.max === null) return `integer ≥ ${schema.min}`
    if (schema.min === null) return `integer ≤ ${schema.max}`
    return `integer ${schema.min} to ${schema.max}`
  }
  if (schema.type === 'string' && schema.min === 1 && schema.max === null) return 'non-empty string'
  if (schema.type === 'string' && (schema.min !== null || schema.max !== null)) {
    return `string of ${schema.min ?? 0} to ${schema.max ?? '∞'} characters`
  }
  return schema.type
}

/** `unknown key` as config.ts formats it for the table at `where` (`sources`, `extensions[0]`, ``). */
function unknownKeyText(where) {
  return code(`${where ? `${where}: ` : ''}unknown key <name>`)
}

export async function configReference(params, ctx) {
  const file = 'src/host/config.ts'
  const source = readRepo(ctx, file)
  if (!/unknown key\$\{/.test(source)) throw new Error(`${file} no longer formats unknown keys as "unknown key <name>"`)
  const words = await parseToml(fs.readFileSync(path.join(HERE, 'project-file.toml'), 'utf8'), ctx)
  const root = zodSchema(constExpression(source, params.schema), source)
  if (root.type !== 'table') throw new Error(`${file}: ${params.schema} is not an object schema`)
  const oneLine = (text) => text.trim().replace(/\s*\n\s*/g, ' ')
  const hashes = '#'.repeat(params.level)
  const isTable = (schema) => schema.type === 'table' || (schema.type === 'array' && schema.item.type === 'table')
  if (params.part === 'example') return await configExample(root, words, ctx, isTable)

  /** The `- key (facts): text` lines of one table, in the wording's order; long defaults after. */
  const describe = (label, table, about) => {
    const documented = Object.keys(about.keys ?? {})
    const defined = [...table.keys].filter(([, schema]) => label !== 'top' || !isTable(schema)).map(([name]) => name)
    const differ = [...defined.filter((k) => !documented.includes(k)), ...documented.filter((k) => !defined.includes(k))]
    if (differ.length > 0) throw new Error(`${file} and project-file.toml differ on the keys of ${label}: ${differ.join(', ')}`)
    const lines = []
    const after = []
    // A rule every key of the table has (each [paths] entry stays inside the project) is said once, by the caller.
    const ruleSets = documented.map((name) => table.keys.get(name).rules.join('\n'))
    const shared = documented.length > 1 && ruleSets[0] !== '' && ruleSets.every((r) => r === ruleSets[0]) ? table.keys.get(documented[0]).rules : []
    for (const name of documented) {
      const schema = table.keys.get(name)
      const facts = [schemaType(schema)]
      if (schema.hasDefault) {
        const value = tomlValue(schema.defaultValue)
        if (value.length <= 40) facts.push(`default ${code(value)}`)
        else {
          facts.push('default below')
          after.push('', `The default ${code(name)}:`, '', '```toml', `${name} = [`, ...schema.defaultValue.map((v) => `  ${tomlValue(v)},`), ']', '```')
        }
      } else facts.push(schema.optional ? 'optional' : 'required')
      let text = oneLine(about.keys[name].text)
      if (shared.length === 0) for (const rule of schema.rules) text += ` Otherwise: ${code(rule)}.`
      lines.push(`- ${code(name)} (${facts.join(', ')}): ${text}`)
    }
    return { lines: [...lines, ...after], shared }
  }

  const strictness = (table, where) =>
    table.strict ? `Unknown keys are rejected (${unknownKeyText(where)}).` : 'Other keys are ignored.'
  const out = []
  const top = words.top
  if (!top) throw new Error('project-file.toml has no [top] table')
  const topKeys = describe('top', root.table, top)
  if (topKeys.shared.length > 0) throw new Error('config-reference: a rule shared by every top-level key has no wording')
  out.push(`${hashes} ${top.heading}`, '', `${oneLine(top.summary)} ${strictness(root.table, '')}`, '', ...topKeys.lines, '')
  const tables = [...root.table.keys].filter(([, schema]) => isTable(schema))
  const described = Object.keys(words).filter((name) => name !== 'top')
  const differ = [...tables.map(([n]) => n).filter((n) => !described.includes(n)), ...described.filter((n) => !tables.some(([t]) => t === n))]
  if (differ.length > 0) throw new Error(`${file} and project-file.toml differ on the tables: ${differ.join(', ')}`)
  for (const name of described) {
    const schema = root.table.keys.get(name)
    const about = words[name]
    const many = schema.type === 'array'
    const table = many ? schema.item : schema
    const keys = describe(name, table.table, about)
    const lead = [oneLine(about.summary)]
    if (keys.shared.length > 0) lead.push(`Otherwise: ${keys.shared.map(code).join('; ')}.`)
    if (many) lead.push(schema.hasDefault && Array.isArray(schema.defaultValue) && schema.defaultValue.length === 0 ? 'Any number of entries, none by default.' : `Default ${code(tomlValue(schema.defaultValue))}.`)
    else if (schema.hasDefault) lead.push(`The table may be left out: a missing ${code(`[${name}]`)} gets every default.`)
    else lead.push('The table is required.')
    lead.push(strictness(table.table, many ? `${name}[<i>]` : name))
    if (table.rules.length > 0 !== Boolean(about.rules)) {
      throw new Error(`${file} and project-file.toml differ on whether ${name} has rules (${table.rules.join('; ') || 'none in the code'})`)
    }
    out.push(`${hashes} ${code(many ? `[[${name}]]` : `[${name}]`)}`, '', lead.join(' '), '', ...keys.lines)
    if (about.rules) out.push('', `${oneLine(about.rules)} Otherwise: ${table.rules.map(code).join('; ')}.`)
    out.push('')
  }
  return out.join('\n').trim()
}

/**
 * A complete `insitu.toml`: every key at its default, in the order of project-file.toml; an array
 * of tables (`[[extensions]]`) has no default entry, so project-file.toml gives its `example`,
 * whose keys must be keys of the schema.
 */
async function configExample(root, words, ctx, isTable) {
  const keyLine = (name, schema) => {
    const value = tomlValue(schema.defaultValue)
    if (value.length <= 60 || !Array.isArray(schema.defaultValue)) return [`${name} = ${value}`]
    return [`${name} = [`, ...schema.defaultValue.map((v) => `  ${tomlValue(v)},`), ']']
  }
  const lines = []
  for (const name of Object.keys(words.top.keys)) lines.push(...keyLine(name, root.table.keys.get(name)))
  for (const name of Object.keys(words).filter((n) => n !== 'top')) {
    const schema = root.table.keys.get(name)
    lines.push('')
    if (schema.type === 'array') {
      const example = words[name].example
      if (!example) throw new Error(`project-file.toml: [${name}] needs an example entry`)
      const entry = await parseToml(example, ctx)
      const unknown = Object.keys(entry).filter((key) => !schema.item.table.keys.has(key))
      if (unknown.length > 0) throw new Error(`project-file.toml: the example of [[${name}]] has keys ${unknown.join(', ')}, which src/host/config.ts does not define`)
      lines.push(`[[${name}]]`, ...example.trim().split('\n'))
      continue
    }
    lines.push(`[${name}]`)
    for (const key of Object.keys(words[name].keys)) {
      const field = schema.table.keys.get(key)
      if (!field.hasDefault || isTable(field)) throw new Error(`config-reference: ${name}.${key} has no default to show`)
      lines.push(...keyLine(key, field))
    }
  }
  return ['```toml', ...lines, '```'].join('\n')
}

// ---------------------------------------------------------------------------------------------
// sdk-reference

/** The declaration of `name` in a .d.ts text, with its leading JSDoc. */
function declaration(text, name) {
  const lines = text.split('\n')
  const at = lines.findIndex((line) => new RegExp(`^export (?:declare )?(?:function|class|interface|type|const) ${name}\\b`).test(line))
  if (at < 0) return null
  let end = at
  if (/\{\s*$/.test(lines[at])) while (end < lines.length && lines[end] !== '}') end++
  let docStart = at
  if (lines[at - 1]?.trim().endsWith('*/')) {
    docStart = at - 1
    while (!lines[docStart].trim().startsWith('/**')) docStart--
  }
  const doc = docStart < at ? parseJsDoc(lines.slice(docStart, at).join('\n')) : null
  return { doc, code: lines.slice(at, end + 1) }
}

/** A declaration's code without `export declare`, private members or (when `keepDocs` is false) member comments. */
function cleanCode(lines, keepDocs) {
  const out = []
  let comment = []
  for (const line of lines) {
    const trimmed = line.trim()
    if (comment.length > 0 || trimmed.startsWith('/**')) {
      comment.push(line)
      if (trimmed.endsWith('*/')) {
        out.push({ comment })
        comment = []
      }
      continue
    }
    if (/^\s+private /.test(line)) {
      if (out.at(-1)?.comment) out.pop()
      continue
    }
    out.push({ line: line.replace(/^export (?:declare )?/, '').replace(/;$/, '') })
  }
  return out.flatMap((entry) => (entry.comment ? (keepDocs ? entry.comment : []) : [entry.line])).join('\n')
}

export function sdkReference(params, ctx) {
  const dts = (rel) => readRepo(ctx, `dist/${rel}`)
  const index = dts('sdk/index.d.ts')
  const exports = []
  for (const m of index.matchAll(/export (type )?\{([^}]*)\} from '([^']+)'/g)) {
    const from = m[3]
    for (const raw of m[2].split(',')) {
      const name = raw.replace(/^\s*type\s+/, '').trim()
      if (name) exports.push({ name, from })
    }
  }
  const hashes = '#'.repeat(params.level)
  const out = []
  const order = (e) => (e.name === 'defineExtension' ? 0 : e.name === 'Extension' ? 1 : e.from === 'zod' ? 3 : e.from.startsWith('../protocol') ? 4 : 2)
  for (const entry of [...exports].sort((a, b) => order(a) - order(b))) {
    out.push(`${hashes} ${code(entry.name)}`, '')
    if (entry.from === 'zod') {
      out.push(`The ${code('z')} of the ${code('zod')} package, re-exported: write each capability's ${code('params')}, ${code('value')} and ${code('result')} schemas with it.`, '')
      continue
    }
    const rel = path.posix.join('sdk', entry.from).replace(/\.js$/, '.d.ts')
    const found = declaration(dts(rel), entry.name)
    if (!found) throw new Error(`dist/${rel} does not declare ${entry.name}`)
    const zodType = new RegExp(`^export type ${entry.name} = z\\.output<typeof ${entry.name}>`).test(found.code[0])
    if (found.doc?.text) out.push(found.doc.text, '')
    if (zodType) {
      const src = `src/${path.posix.join('sdk', entry.from).replace(/\.js$/, '.ts')}`
      const schema = new RegExp(`^export const ${entry.name} = [\\s\\S]*?(?=\\n(?:export |\\n))`, 'm').exec(readRepo(ctx, src))
      if (!schema) throw new Error(`${src} does not define the schema ${entry.name}`)
      out.push(`The output type of this schema of the protocol (${code(src)}):`, '', '```ts', schema[0].replace(/^export /, '').trim(), '```', '')
      continue
    }
    out.push('```ts', cleanCode(found.code, entry.from.startsWith('./')), '```', '')
  }
  return out.join('\n').trim()
}
