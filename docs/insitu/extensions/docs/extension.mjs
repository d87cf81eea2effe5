/**
 * vite-plugin-insitu/docs 0.1.0: the docs site's transforms, written with the Node SDK.
 *
 * - `repo-file` {path, section?, shift?, code?}: a repository file's Markdown, or the file as a code
 *   block (repo-file.mjs).
 * - `options-reference` {file?, interface?, level?}: one heading per plugin option from its JSDoc.
 * - `cli-reference` {part = "help" | "commands", level?}: the --help text, or each command with
 *   what it does, its synopsis and its options.
 * - `capabilities-reference` {level?}: the builtin capabilities and the options their code reads,
 *   described by capabilities.toml (beside this file).
 * - `sdk-reference` {level?}: every export of `vite-plugin-insitu/sdk` with its declaration.
 * - `config-reference` {part = "keys" | "example", schema?, level?}: every table and key of
 *   `insitu.toml` from the zod schema in src/host/config.ts, described by project-file.toml
 *   (beside this file); or a complete file, every key at its default.
 * - `protocol-capture` {artifact = "frames" | "lock" | "add-output" | "output" | "document",
 *   scenario?, method?, trace?, errors?, show?, lines?, root?}: what a real run of
 *   examples/python-extension under the built command line sends on the wire, writes and prints
 *   (protocol-capture.mjs).
 * Every repository file read is a `repo:<path>` dependency (see insitu-extension.toml).
 */
import { defineExtension, z } from 'vite-plugin-insitu/sdk'
import { protocolCapture } from './protocol-capture.mjs'
import { repoFile } from './repo-file.mjs'
import { capabilitiesReference, cliReference, configReference, optionsReference, sdkReference } from './references.mjs'

const level = z.int().min(1).max(6).default(3)
const ext = defineExtension({ name: 'vite-plugin-insitu/docs', version: '0.1.0' })

ext.transform(
  'repo-file',
  {
    params: z.object({
      path: z.string().min(1),
      section: z.string().min(1).optional(),
      shift: z.int().min(-5).max(5).default(0),
      code: z.string().optional(),
    }),
  },
  repoFile,
)
ext.transform(
  'options-reference',
  { params: z.object({ file: z.string().default('src/plugin/options.ts'), interface: z.string().default('InsituOptions'), level }) },
  optionsReference,
)
ext.transform('cli-reference', { params: z.object({ part: z.enum(['help', 'commands']), level }) }, cliReference)
ext.transform('capabilities-reference', { params: z.object({ level }) }, capabilitiesReference)
ext.transform('sdk-reference', { params: z.object({ level }) }, sdkReference)
ext.transform(
  'config-reference',
  { params: z.object({ part: z.enum(['keys', 'example']).default('keys'), schema: z.string().default('ProjectConfigSchema'), level }) },
  configReference,
)
ext.transform(
  'protocol-capture',
  {
    params: z.object({
      artifact: z.enum(['frames', 'lock', 'add-output', 'output', 'document']).default('frames'),
      scenario: z.enum(['example', 'denied']).default('example'),
      method: z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]).optional(),
      trace: z.array(z.string()).optional(),
      errors: z.boolean().optional(),
      show: z.enum(['both', 'response']).default('both'),
      lines: z.string().min(1).optional(),
      root: z.string().min(1).default('/tmp/tw'),
    }),
  },
  protocolCapture,
)

await ext.serve()
