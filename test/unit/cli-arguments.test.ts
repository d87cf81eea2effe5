/** Command-line argument parsing (src/cli/arguments.ts) against the real command table. */
import { describe, expect, it } from 'vitest'
import { parseArguments } from '../../src/cli/arguments.js'
import { COMMANDS } from '../../src/cli/main.js'

const parse = (...argv: string[]) => {
  const parsed = parseArguments(argv, COMMANDS)
  return parsed.kind === 'run' ? { command: parsed.command.name, positionals: parsed.positionals, options: parsed.options } : parsed
}

describe('parseArguments', () => {
  it('finds one- and two-word commands with their positionals and options in any order', () => {
    expect(parse('check', '--root', 'site', '--format=json')).toEqual({ command: 'check', positionals: {}, options: { root: 'site', format: 'json' } })
    expect(parse('extension', 'add', '--version', '>=1,<2', 'github:acme/x@v1', '--root=site')).toEqual({
      command: 'extension add',
      positionals: { SOURCE: 'github:acme/x@v1' },
      options: { version: '>=1,<2', root: 'site' },
    })
    expect(parse('init', 'docs', '--force')).toEqual({ command: 'init', positionals: { DIR: 'docs' }, options: { force: 'true' } })
    expect(parse('init')).toEqual({ command: 'init', positionals: {}, options: {} })
    expect(parse('watch', '--poll', '250', '--no-cache', '--root=site')).toEqual({
      command: 'watch',
      positionals: {},
      options: { poll: '250', 'no-cache': 'true', root: 'site' },
    })
    expect(parse('watch', '--format', 'json')).toEqual({ kind: 'usage', problem: 'unknown option --format' })
  })

  it('reads --version as the version except where a command takes it as a value', () => {
    expect(parse('check', '--version')).toEqual({ kind: 'version' })
    expect(parse('--version')).toEqual({ kind: 'version' })
    expect(parse('extension', 'add', 'x', '-v')).toEqual({ kind: 'version' })
    expect(parse('extension', 'add', 'x', '--version')).toEqual({ kind: 'usage', problem: '--version needs a spec' })
    expect(parse('sync', '-h', '--nonsense')).toEqual({ kind: 'help' })
  })

  it('names each usage problem', () => {
    expect(parse()).toEqual({ kind: 'usage', problem: 'no command given' })
    expect(parse('--no-cache')).toEqual({ kind: 'usage', problem: 'unknown option --no-cache' })
    expect(parse('lint')).toEqual({ kind: 'usage', problem: 'unknown command lint' })
    expect(parse('check', 'extra')).toEqual({ kind: 'usage', problem: 'unexpected argument extra' })
    expect(parse('check', '--root')).toEqual({ kind: 'usage', problem: '--root needs a dir' })
    expect(parse('check', '--root', 'a', '--root', 'b')).toEqual({ kind: 'usage', problem: '--root given twice' })
    expect(parse('init', '--force=yes')).toEqual({ kind: 'usage', problem: '--force takes no value' })
    expect(parse('init', '--no-cache')).toEqual({ kind: 'usage', problem: 'unknown option --no-cache' })
    expect(parse('extension', 'list', 'more')).toEqual({ kind: 'usage', problem: 'unexpected argument more' })
    expect(parse('extension')).toEqual({ kind: 'usage', problem: 'extension needs a subcommand (add|list)' })
    expect(parse('extension', 'remove')).toEqual({ kind: 'usage', problem: 'unknown command extension remove' })
  })

  it('suggests the command, subcommand, option or value a misspelt one meant', () => {
    expect(parse('chek')).toEqual({ kind: 'usage', problem: 'unknown command chek; did you mean check?' })
    expect(parse('snyc', '--root', 'site')).toEqual({ kind: 'usage', problem: 'unknown command snyc; did you mean sync?' })
    expect(parse('extension', 'lst')).toEqual({ kind: 'usage', problem: 'unknown command extension lst; did you mean extension list?' })
    expect(parse('extension', 'ad', 'x')).toEqual({ kind: 'usage', problem: 'unknown command extension ad; did you mean extension add?' })
    expect(parse('extnsion', 'list')).toEqual({ kind: 'usage', problem: 'unknown command extnsion; did you mean extension list?' })
    expect(parse('extnsion', 'lst')).toEqual({ kind: 'usage', problem: 'unknown command extnsion; did you mean extension?' })
    expect(parse('check', '--no-cahce')).toEqual({ kind: 'usage', problem: 'unknown option --no-cahce; did you mean --no-cache?' })
    expect(parse('sync', '--fromat=json')).toEqual({ kind: 'usage', problem: 'unknown option --fromat=json; did you mean --format?' })
    expect(parse('watch', '--pol', '100')).toEqual({ kind: 'usage', problem: 'unknown option --pol; did you mean --poll?' })
    expect(parse('init', '--forse')).toEqual({ kind: 'usage', problem: 'unknown option --forse; did you mean --force?' })
    expect(parse('check', '--verison')).toEqual({ kind: 'usage', problem: 'unknown option --verison; did you mean --version?' })
    expect(parse('extension', 'add', 'x', '--verion=1')).toEqual({ kind: 'usage', problem: 'unknown option --verion=1; did you mean --version?' })
    expect(parse('check', '--format', 'jsn')).toEqual({ kind: 'usage', problem: '--format must be one of text, json, github (got jsn); did you mean json?' })
    expect(parse('check', '--format', 'xml')).toEqual({ kind: 'usage', problem: '--format must be one of text, json, github (got xml)' })
  })
})
