/**
 * Benchmark: how many jobs one edit re-runs, and how many of those did not read what the edit
 * changed (issue #9: editing 1 of 10,000 task documents re-runs only the jobs that read it).
 * `npm run bench:reruns [-- --sizes=10000 --runs=3]`.
 *
 * Contract:
 * - Per layout and size: `generateProject` in a temp folder, one `InsituEngine` in this process
 *   (real files, real SQLite, no mock); every document with regions rendered once first (as if
 *   a page had loaded each: in the nested layout a task edit then re-checks every folder index
 *   that reads the edited column).
 * - Edits: the front matter of one open task (`status: open` → `done`, then back), a prose line
 *   of README.md, a line of the included snippet. Each is written to disk, then handled as the
 *   plugin handles it: `engine.affected([{ type: 'update', path }])`, and every affected
 *   document with regions (plus the edited file when it is one) rendered again from its text.
 * - Jobs that ran: `engine.stats.jobsRun` after minus before when the engine counts jobs, else
 *   the jobs of the re-rendered documents (each re-render ran all of them: the whole document
 *   was the unit of caching). Which jobs ran: those of the re-rendered results whose `reused` is
 *   not true, none of a result that is the very object of the previous render (early cutoff).
 * - A job READ the edit when its own recorded dependencies select it for the event under the
 *   engine's rule (a fresh `DependencyGraph` holding only that job): `fs:file:`/`fs:dir:`/
 *   `fs:glob:` covering the path, or `index:documents`/`sql:model:` when the event changed a
 *   row of the documents view. A job that ran without reading the edit is SPURIOUS. (The rule
 *   is coarse for the index: a README edit changes README's own row, so every SQL job "read"
 *   it although its model only selects tasks; the column "result changed" shows that.)
 * - Result changed: jobs that ran and whose content or value differs from the previous render.
 * - The counts are the same in every run (else the cell shows min–max); the time (affected +
 *   re-render) is the median. Rewrites the section `reruns@<size>` (flat) or `reruns-nested@<size>`
 *   of bench/RESULTS.md.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { DependencyGraph } from '../src/engine/dependency-graph.js'
import { InsituEngine, ownerFile } from '../src/engine/engine.js'
import type { DocumentResult, JobResult } from '../src/engine/render-document.js'
import { findRegionDocuments, firstOpenTask } from './bench-projects.js'
import { cell, formatSize, machineLine } from './measurements.js'
import { generateProject, type ProjectLayout } from './project-generator.js'
import { runSizes } from './results-file.js'

interface Edit {
  label: string
  file: string
  /** Rewrites the file's text for run `run` (a different text each time). */
  next(text: string, run: number): string
}

interface EditCount {
  reRendered: number
  ran: number
  /** Counted from `engine.stats` (true) or from the re-rendered jobs (false). */
  fromStats: boolean
  /** Jobs of the re-rendered results whose `reused` is not true (equals `ran` when counted by stats, or the engine miscounts). */
  ranJobs: number
  read: number
  spurious: string[]
  reused: number
  /** Jobs whose content or value differs from the document's previous render. */
  changed: number
  ms: number
}

function jobName(document: string, job: JobResult): string {
  return `${document}#${job.id} (${job.kind})`
}

/** A copy of `engine.stats` (the engine may update one object in place), or undefined before it exists. */
function jobStats(engine: InsituEngine): { jobsRun: number; jobsReused: number } | undefined {
  const stats = (engine as unknown as { stats?: { jobsRun: number; jobsReused: number } }).stats
  return stats && { jobsRun: stats.jobsRun, jobsReused: stats.jobsReused }
}

/** True when the job's own dependencies select it for this event (the engine's rule). */
function readTheEdit(job: JobResult, file: string, documentsChanged: boolean): boolean {
  const graph = new DependencyGraph()
  graph.set('job', job.dependencies)
  return graph.affected([{ type: 'update', path: file }], { documents: documentsChanged, entries: false, git: false }).has('job')
}

async function measureEdit(
  engine: InsituEngine,
  root: string,
  regionDocuments: string[],
  previous: Map<string, DocumentResult>,
  edit: Edit,
  run: number,
): Promise<EditCount> {
  const absolute = path.join(root, edit.file)
  fs.writeFileSync(absolute, edit.next(fs.readFileSync(absolute, 'utf8'), run))
  const before = jobStats(engine)
  const started = performance.now()
  const affected = engine.affected([{ type: 'update', path: edit.file }])
  const owners = new Set(affected.owners.map(ownerFile).filter((owner) => regionDocuments.includes(owner)))
  if (regionDocuments.includes(edit.file)) owners.add(edit.file)
  const results: DocumentResult[] = []
  for (const owner of [...owners].sort()) {
    results.push(await engine.renderDocument(owner, fs.readFileSync(path.join(root, owner), 'utf8')))
  }
  const ms = performance.now() - started
  const after = jobStats(engine)
  // A render that reused every job on the same text returns the very same result object as
  // before (the engine's early cutoff), whose jobs keep the flags of the render that ran them.
  const ranJobs = results.flatMap((result) =>
    result === previous.get(result.path) ? [] : result.jobs.filter((job) => !(job as { reused?: boolean }).reused).map((job) => ({ document: result.path, job })),
  )
  const read = ranJobs.filter(({ job }) => readTheEdit(job, edit.file, affected.projectionChanged))
  const spurious = ranJobs.filter(({ job }) => !readTheEdit(job, edit.file, affected.projectionChanged))
  const changed = ranJobs.filter(({ document, job }) => {
    const before = previous.get(document)?.jobs.find((j) => j.id === job.id && j.target === job.target)
    return !before || JSON.stringify([before.content, before.value]) !== JSON.stringify([job.content, job.value])
  })
  for (const result of results) previous.set(result.path, result)
  const reusedJobs = results.reduce((sum, result) => sum + result.jobs.filter((job) => (job as { reused?: boolean }).reused).length, 0)
  return {
    reRendered: results.length,
    ran: before && after ? after.jobsRun - before.jobsRun : ranJobs.length,
    fromStats: Boolean(before && after),
    ranJobs: ranJobs.length,
    read: read.length,
    spurious: spurious.map(({ document, job }) => jobName(document, job)),
    reused: before && after ? after.jobsReused - before.jobsReused : reusedJobs,
    changed: changed.length,
    ms,
  }
}

function countCell(values: number[]): string {
  const min = Math.min(...values)
  const max = Math.max(...values)
  return min === max ? String(min) : `${min}–${max}`
}

/** The documents with regions, named when they are few. */
function regionDocumentsText(documents: readonly string[]): string {
  if (documents.length <= 5) return `${documents.length} document(s) with regions (${documents.join(', ')})`
  return `${documents.length} documents with regions (${documents.slice(0, 3).join(', ')}, …)`
}

async function benchSize(documents: number, runs: number, keep: boolean, layout: ProjectLayout): Promise<string> {
  console.error(`reruns: ${layout} layout, ${formatSize(documents)} documents: generating…`)
  const tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), `insitu-bench-reruns-${layout}-${documents}-`)))
  const root = path.join(tmp, 'project')
  const generated = generateProject(root, { documents, layout })
  const regionDocuments = findRegionDocuments(root)
  const task = firstOpenTask(root, generated.tasks)
  const edits: Edit[] = [
    {
      label: `front matter of 1 of ${formatSize(documents)} task documents (\`${task}\`: status open ↔ done)`,
      file: task,
      next: (text, run) => text.replace(/^status: .*$/m, `status: ${run % 2 === 0 ? 'done' : 'open'}`),
    },
    {
      label: 'prose line of README.md',
      file: generated.readme,
      next: (text, run) => text.replace(/^That is all for now.*$/m, `That is all for now (edit ${run}).`),
    },
    {
      label: `included file (\`${generated.snippet}\`)`,
      file: generated.snippet,
      next: (text, run) => text.replace(/hello[^,]*,/, `hello ${run},`),
    },
  ]
  const counts = new Map<Edit, EditCount[]>(edits.map((edit) => [edit, []]))
  let totalJobs = 0
  const previous = new Map<string, DocumentResult>()
  const engine = await InsituEngine.create({ root })
  try {
    for (const document of regionDocuments) {
      const result = await engine.renderDocument(document, fs.readFileSync(path.join(root, document), 'utf8'))
      totalJobs += result.jobs.length
      previous.set(document, result)
    }
    for (let run = 0; run < runs; run++) {
      for (const edit of edits) {
        const count = await measureEdit(engine, root, regionDocuments, previous, edit, run)
        counts.get(edit)!.push(count)
        console.error(`  run ${run + 1}/${runs}: ${edit.file}: ${count.ran} ran, ${count.spurious.length} spurious, ${count.ms.toFixed(0)} ms`)
      }
    }
  } finally {
    await engine.close()
    if (keep) console.error(`  kept ${tmp}`)
    else fs.rmSync(tmp, { recursive: true, force: true })
  }
  const fromStats = [...counts.values()].flat().every((count) => count.fromStats)
  const lines = [
    `### ${formatSize(documents)} documents, ${layout} layout`,
    '',
    `Machine: ${machineLine()}. ${runs} runs per edit; ${regionDocumentsText(regionDocuments)}, ${totalJobs} jobs in all, every one rendered first (as if a page had loaded each). ` +
      (fromStats ? 'Jobs ran: `engine.stats.jobsRun` delta.' : 'Jobs ran: counted from the re-rendered results (the engine has no `stats` yet; every job of a re-rendered document ran).'),
    '',
    '| edit | documents re-rendered | jobs ran | read the edit | spurious | result changed | reused | time (affected + re-render) |',
    '| --- | --- | --- | --- | --- | --- | --- | --- |',
    ...edits.map((edit) => {
      const c = counts.get(edit)!
      const spurious = [...new Set(c.flatMap((count) => count.spurious))]
      return `| ${edit.label} | ${countCell(c.map((x) => x.reRendered))} | ${countCell(c.map((x) => x.ran))} | ${countCell(c.map((x) => x.read))} | ${countCell(c.map((x) => x.spurious.length))}${spurious.length ? `: ${spurious.join(', ')}` : ''} | ${countCell(c.map((x) => x.changed))} | ${countCell(c.map((x) => x.reused))} | ${cell(c.map((x) => x.ms), 'ms')} |`
    }),
  ]
  const mismatched = edits.filter((edit) => counts.get(edit)!.some((count) => count.ran !== count.ranJobs))
  if (mismatched.length > 0) {
    lines.push('', `Warning: \`engine.stats.jobsRun\` disagrees with the jobs not marked \`reused\` for: ${mismatched.map((edit) => edit.file).join(', ')}.`)
  }
  const taskSpurious = counts.get(edits[0]!)!.some((count) => count.spurious.length > 0)
  lines.push('', `Target (a task edit re-runs only the jobs that read it, 0 spurious): ${taskSpurious ? 'not met' : 'met'}.`)
  return lines.join('\n')
}

await runSizes('reruns', 3, benchSize)
