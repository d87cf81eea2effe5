/**
 * playground/node-team 0.1.0, written with the Node SDK.
 *
 * - resource `team` {file = "data/team.csv"}: the CSV's rows (objects keyed by the header),
 *   each with `open_tasks`, the number of rows of the `open_tasks` SQL model it owns. Both
 *   reads go through the host, so editing the CSV or any task file refreshes the page.
 * - transform `csv_module` {content}: the text of a CSV module (a module rule of
 *   vite.config.ts) becomes `export const columns = [...]` and `export default [rows]`.
 */
import { defineExtension, z } from '../../../src/sdk/index.ts'

type Row = Record<string, string>

const ext = defineExtension({ name: 'playground/node-team', version: '0.1.0' })

ext.resource('team', { params: z.looseObject({ file: z.string().default('data/team.csv') }) }, async (params, ctx) => {
  const members = parseCsv(String(await ctx.resource(`fs:file:${params.file}`))).rows
  const open = (await ctx.resource('sql:model:open_tasks')) as { owner: string | null }[]
  return members.map((member) => ({
    ...member,
    open_tasks: open.filter((task) => task.owner === member.name).length,
  }))
})

ext.transform('csv_module', { params: z.looseObject({ content: z.string() }) }, (params) => {
  const { columns, rows } = parseCsv(params.content)
  return [
    `export const columns = ${JSON.stringify(columns)}`,
    `export default ${JSON.stringify(rows, null, 2)}`,
    '',
  ].join('\n')
})

/** RFC 4180 CSV: the first record is the header; quoted fields may hold commas, quotes ("") and line breaks. */
function parseCsv(text: string): { columns: string[]; rows: Row[] } {
  const records: string[][] = []
  let record: string[] = []
  let field = ''
  let quoted = false
  for (let i = 0; i < text.length; i++) {
    const char = text[i]
    if (quoted) {
      if (char === '"' && text[i + 1] === '"') {
        field += '"'
        i++
      } else if (char === '"') quoted = false
      else field += char
    } else if (char === '"') quoted = true
    else if (char === ',') {
      record.push(field)
      field = ''
    } else if (char === '\n' || char === '\r') {
      if (char === '\r' && text[i + 1] === '\n') i++
      record.push(field)
      records.push(record)
      record = []
      field = ''
    } else field += char
  }
  if (field !== '' || record.length > 0) records.push([...record, field])
  const [columns = [], ...body] = records.filter((r) => r.some((cell) => cell !== ''))
  return { columns, rows: body.map((cells) => Object.fromEntries(columns.map((column, i) => [column, cells[i] ?? '']))) }
}

await ext.serve()
