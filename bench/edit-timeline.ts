/**
 * Where the time of one edit goes, from the write to the page's DOM, with the plugin and
 * without it: the moments each stage of the dev server is reached. Not a benchmark row (prints
 * only; docs/internals/benchmarks.md quotes it under "Where the time goes", "One edit, from the
 * write to the DOM").
 * `npm run bench:edit-timeline [-- --sizes=1000 --layouts=nested --runs=9]`.
 *
 * Contract:
 * - Per layout and size: `prepareProjects`, the two dev servers and pages of bench/hmr.ts
 *   (bench/hmr-edits.ts), and its edit kinds, each against Vite's own edit of the same file (the
 *   floor's "same file" half; the quiet wait of bench/quiet.ts before each edit); one unmeasured
 *   round, then `--runs` (default 9), the side going first alternating.
 * - Marks, in wall-clock milliseconds after the write, taken by probes outside the plugin: Vite's
 *   watcher reporting the file (a listener beside Vite's own); the first `hotUpdate` hook
 *   ordered `post` (a probe plugin placed before insitu, whose hook is ordered `post` too) and the
 *   one after insitu's (its plan is done); the update message sent to the page; the page's
 *   request of the module it shows the edit in (the README with the plugin; with Vite alone the
 *   edited file's module), that module's `load` (a probe plugin before insitu) and the
 *   response's end; the DOM showing the edit.
 * - Prints per kind the median (min–max) of each mark, each side.
 */
import path from 'node:path'
import type { Browser } from 'playwright-core'
import type { Plugin } from 'vite'
import { launchChromium } from '../test/e2e/chromium.js'
import { type ProjectLayout, prepareProjects } from './bench-projects.js'
import { closePages, editKinds, measureEdit, serve, type Served, type Side } from './hmr-edits.js'
import { benchArgs, cell, formatSize, inAlternateOrder, machineLine, wallClockMs } from './measurements.js'

const MARKS = [
  ['watcher', "Vite's watcher reports the file"],
  ['hotUpdate', "`hotUpdate` reaches the hooks ordered `post` (insitu's among them)"],
  ['planned', "insitu's `hotUpdate` is done (the plan: index, affected owners, their render)"],
  ['sent', 'the update message is sent to the page'],
  ['request', 'the page requests the module that shows the edit'],
  ['load', "that module's `load` starts"],
  ['response', 'its response ends'],
  ['dom', 'the DOM shows the edit'],
] as const

type Mark = (typeof MARKS)[number][0]

/** The edit being measured on one side: its file, the module it is shown in, and the marks so far. */
interface Watching {
  file: string
  shownModule: string
  writtenAt: number
  marks: Partial<Record<Mark, number>>
}

function probes(watching: () => Watching | null): { before: Plugin[]; after: Plugin[] } {
  const mark = (name: Mark) => {
    const current = watching()
    if (current && current.marks[name] === undefined) current.marks[name] = wallClockMs() - current.writtenAt
  }
  const isEdited = (file: string) => path.resolve(file) === watching()?.file
  const before: Plugin = {
    name: 'bench:timeline-before',
    enforce: 'pre',
    hotUpdate: {
      order: 'post',
      handler(update) {
        if (this.environment.name === 'client' && isEdited(update.file)) mark('hotUpdate')
      },
    },
    load(id) {
      const shown = watching()?.shownModule
      if (shown && id.startsWith(shown) && id.includes('?raw')) mark('load')
      return null
    },
    configureServer(server) {
      server.watcher.on('all', (_event, file) => {
        if (isEdited(file)) mark('watcher')
      })
      const send = server.ws.send.bind(server.ws) as (...args: unknown[]) => void
      server.ws.send = ((...args: unknown[]) => {
        if ((args[0] as { type?: string } | undefined)?.type === 'update') mark('sent')
        send(...args)
      }) as typeof server.ws.send
      // Before Vite's own middlewares: the request as it arrives, and the end of its response.
      server.middlewares.stack.unshift({
        route: '',
        handle: (request: { url?: string }, response: { on(event: 'finish', listener: () => void): void }, next: () => void) => {
          const shown = watching()?.shownModule
          const url = request.url ?? ''
          if (shown && url.includes('?') && url.startsWith(`/${path.relative(server.config.root, shown)}`)) {
            mark('request')
            response.on('finish', () => mark('response'))
          }
          next()
        },
      } as never)
    },
  }
  const after: Plugin = {
    name: 'bench:timeline-after',
    enforce: 'post',
    hotUpdate: {
      order: 'post',
      handler(update) {
        if (this.environment.name === 'client' && isEdited(update.file)) mark('planned')
      },
    },
  }
  return { before: [before], after: [after] }
}

async function measure(layout: ProjectLayout, documents: number, runs: number, keep: boolean): Promise<void> {
  const projects = await prepareProjects(documents, layout)
  let browser: Browser | undefined
  const servers: Served[] = []
  const watching: Record<Side, Watching | null> = { plugin: null, plain: null }
  try {
    browser = await launchChromium()
    for (const side of ['plugin', 'plain'] as const) {
      servers.push(await serve(side, side === 'plugin' ? projects.plugin : projects.plain, browser, probes(() => watching[side])))
    }
    const kinds = editKinds(projects)
    const marks = kinds.map(() => ({ plugin: [] as Watching['marks'][], plain: [] as Watching['marks'][] }))
    let edits = 0
    for (let run = -1; run < runs; run++) {
      for (const [k, kind] of kinds.entries()) {
        const edit = (served: Served) => async () => {
          const root = served.root
          // The plugin's edit, or Vite's edit of the same file; the module its page shows it in.
          const edited = served.side === 'plugin' ? kind.plugin : kind.sameFile
          const current: Watching = {
            file: path.join(root, edited.file),
            shownModule: path.join(root, served.side === 'plugin' ? projects.generated.readme : edited.file).split(path.sep).join('/'),
            writtenAt: 0,
            marks: {},
          }
          const { ms: total } = await measureEdit(served, edited, `line${++edits}x`, (at) => {
            current.writtenAt = at
            watching[served.side] = current
          })
          watching[served.side] = null
          current.marks.dom = total
          if (run >= 0) marks[k]![served.side].push(current.marks)
        }
        await inAlternateOrder(run, edit(servers[0]!), edit(servers[1]!))
      }
    }
    console.log(`\n### ${formatSize(documents)} documents, ${layout} layout: milliseconds after the write\n`)
    console.log(`Machine: ${machineLine()}. Median of ${runs} edits (min–max) per kind and side.\n`)
    for (const [k, kind] of kinds.entries()) {
      console.log(`${kind.label}; Vite alone: ${kind.sameFile.label}\n`)
      console.log('| moment | with the plugin | Vite alone |')
      console.log('| --- | --- | --- |')
      for (const [name, label] of MARKS) {
        const of = (side: Side) => marks[k]![side].map((m) => m[name]).filter((v): v is number => v !== undefined)
        const plugin = of('plugin')
        const plain = of('plain')
        if (plugin.length === 0 && plain.length === 0) continue
        console.log(`| ${label} | ${plugin.length > 0 ? cell(plugin, 'ms') : '—'} | ${plain.length > 0 ? cell(plain, 'ms') : '—'} |`)
      }
      console.log('')
    }
  } finally {
    for (const served of servers) {
      await closePages(served)
      await served.server.close()
    }
    await browser?.close()
    if (keep) console.log(`kept ${projects.tmp}`)
    else projects.remove()
  }
}

const args = benchArgs(process.argv.slice(2), 9)
for (const layout of args.layouts) for (const documents of args.sizes) await measure(layout, documents, args.runs, args.keep)
