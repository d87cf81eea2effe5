/**
 * Command-line arguments: which command, its positional arguments and its options.
 *
 * Contract: `parseArguments(argv, commands)` → `help` (`-h`/`--help` anywhere), `version`
 * (`-v`, or `--version` where the command does not take a `--version` value), `usage` with the
 * problem (`no command given`, `unknown command x`, `unknown option --x`, `--root needs a
 * value`, `--root given twice`, `unexpected argument x`, `extension add needs SOURCE`, ...), or
 * `run` with the command and its values. A command is one word (`check`) or two (`extension
 * add`); `--opt value` and `--opt=value` are the same. Options and positionals may come in any
 * order after the command's words. Pure; nothing is recorded.
 * A misspelt name gets "did you mean" (values/did-you-mean.ts): `unknown command chek; did you
 * mean check?`, `unknown command extension lst; did you mean extension list?` (and `extnsion
 * list` → `extension list`), `unknown option --no-cahce; did you mean --no-cache?` (among the
 * command's options, `--help` and `--version`), `--format must be one of text, json, github
 * (got jsn); did you mean json?`.
 */
import { closestName, didYouMean } from '../values/did-you-mean.js'


export interface OptionSpec {
  /** Placeholder of the option's value (`dir`), or null for a flag. */
  value: string | null
  /** Values the option accepts (else any non-empty text). */
  choices?: readonly string[]
}

export interface CommandSpec {
  /** `check`, `extension add`, … */
  name: string
  positionals: readonly { name: string; required: boolean }[]
  options: Readonly<Record<string, OptionSpec>>
}

export interface ParsedCommand<C extends CommandSpec = CommandSpec> {
  kind: 'run'
  command: C
  positionals: Record<string, string>
  /** Option values by name without dashes (`root`); flags are `'true'`. */
  options: Record<string, string>
}

export type ParsedArguments<C extends CommandSpec = CommandSpec> =
  | { kind: 'help' }
  | { kind: 'version' }
  | { kind: 'usage'; problem: string }
  | ParsedCommand<C>

export function parseArguments<C extends CommandSpec>(argv: readonly string[], commands: readonly C[]): ParsedArguments<C> {
  if (argv.some((argument) => argument === '-h' || argument === '--help')) return { kind: 'help' }
  const words = argv.filter((argument) => !argument.startsWith('-'))
  const command =
    commands.find((c) => c.name.split(' ').length === 2 && c.name === words.slice(0, 2).join(' ')) ??
    commands.find((c) => c.name === words[0])
  const takesVersion = command?.options['--version'] !== undefined
  if (argv.includes('-v') || (!takesVersion && argv.some((a) => a === '--version' || a.startsWith('--version=')))) {
    return { kind: 'version' }
  }
  if (argv.length === 0 || words.length === 0) {
    const option = argv.find((argument) => argument.startsWith('-'))
    return { kind: 'usage', problem: option ? `unknown option ${option}` : 'no command given' }
  }
  if (!command) return { kind: 'usage', problem: unknownCommand(words, commands) }
  let skip = command.name.split(' ').length
  const positionals: string[] = []
  const options: Record<string, string> = {}
  for (let i = 0; i < argv.length; i++) {
    const argument = argv[i]!
    if (!argument.startsWith('-')) {
      if (skip > 0) {
        skip--
        continue
      }
      positionals.push(argument)
      continue
    }
    const equals = argument.indexOf('=')
    const name = argument.startsWith('--') && equals !== -1 ? argument.slice(0, equals) : argument
    const spec = command.options[name]
    if (!spec) return { kind: 'usage', problem: `unknown option ${argument}${optionSuggestion(name, command)}` }
    const key = name.replace(/^-+/, '')
    if (options[key] !== undefined) return { kind: 'usage', problem: `${name} given twice` }
    if (spec.value === null) {
      if (equals !== -1 && argument.startsWith('--')) return { kind: 'usage', problem: `${name} takes no value` }
      options[key] = 'true'
      continue
    }
    const value = equals !== -1 && argument.startsWith('--') ? argument.slice(equals + 1) : argv[++i]
    if (value === undefined || value === '') return { kind: 'usage', problem: `${name} needs ${article(spec.value)} ${spec.value}` }
    if (spec.choices && !spec.choices.includes(value)) {
      return { kind: 'usage', problem: `${name} must be one of ${spec.choices.join(', ')} (got ${value})${didYouMean(value, spec.choices)}` }
    }
    options[key] = value
  }
  const named: Record<string, string> = {}
  for (const [index, positional] of command.positionals.entries()) {
    const value = positionals[index]
    if (value === undefined) {
      if (positional.required) return { kind: 'usage', problem: `${command.name} needs ${positional.name}` }
      continue
    }
    named[positional.name] = value
  }
  if (positionals.length > command.positionals.length) {
    return { kind: 'usage', problem: `unexpected argument ${positionals[command.positionals.length]!}` }
  }
  return { kind: 'run', command, positionals: named, options }
}

/** The problem with `words`, whose first one or two name no command: a missing or unknown subcommand, or an unknown command. */
function unknownCommand(words: readonly string[], commands: readonly CommandSpec[]): string {
  const [first, second] = words as [string, string | undefined]
  const group = commands.filter((c) => c.name.startsWith(`${first} `))
  if (group.length > 0) {
    const names = group.map((c) => c.name.split(' ')[1]!)
    if (second === undefined) return `${first} needs a subcommand (${names.join('|')})`
    const closest = closestName(second, names)
    return `unknown command ${first} ${second}${closest === undefined ? '' : `; did you mean ${first} ${closest}?`}`
  }
  const closest = closestName(first, new Set(commands.map((c) => c.name.split(' ')[0]!)))
  if (closest === undefined) return `unknown command ${first}`
  // `extnsion list`: the command the two words meant, when the second is one of its subcommands.
  const meant = second !== undefined && commands.some((c) => c.name === `${closest} ${second}`) ? `${closest} ${second}` : closest
  return `unknown command ${first}; did you mean ${meant}?`
}

/** `; did you mean --x?` for an option `command` does not take, among its options and the global `--help` and `--version`. */
function optionSuggestion(name: string, command: CommandSpec): string {
  if (!name.startsWith('--')) return ''
  return didYouMean(name, [...Object.keys(command.options), '--help', '--version'])
}

function article(noun: string): string {
  return /^[aeiou]/i.test(noun) ? 'an' : 'a'
}
