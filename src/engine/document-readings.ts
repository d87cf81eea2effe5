/**
 * What a document's text says before any job runs: its front matter, its regions and their
 * headers, its materializations, its stray end comments. Read once per text of a path: a dev
 * server renders a document with regions again whenever one of its inputs changes, its own text
 * the same each time (issue #38: 0.3–0.6 ms of every such update for a 46 KiB README).
 *
 * Contract:
 * - `readDocument(relPath, text)` returns what render-document.ts reads of `text` (the input
 *   limits checked, `splitFrontMatter`, `scanRegions`, `strayEndLines`, `materializationJobs`),
 *   or throws what they throw (a `LineError`; nothing is kept then).
 * - The last reading of each path is kept while its text stays the same string (compared whole:
 *   no hash can make two texts one), for at most `READINGS_KEPT` paths whose texts hold at most
 *   `READING_CHARS_KEPT` characters in all (the least recently read go first; a longer text is
 *   read every time). A kept reading is shared: it is deeply frozen, so a caller that changed a
 *   region's options (a later render would see the change) fails at once instead.
 */
import { materializationJobs, splitFrontMatter } from '../documents/frontmatter.js'
import { checkDocumentText } from '../documents/input-limits.js'
import { type Region, type RegionProblem, scanRegions, strayEndLines } from '../documents/regions.js'

export interface DocumentReading {
  /** Where the body starts (after the front matter), and whether there is front matter data. */
  frontMatter: { readonly bodyOffset: number; readonly hasData: boolean }
  regions: readonly Region[]
  unterminated: RegionProblem | null
  strayEnds: readonly number[]
  materializations: readonly ReturnType<typeof materializationJobs>[number][]
}

/** How many paths keep their last reading. */
export const READINGS_KEPT = 64
/** How many characters the texts of the readings kept may hold in all (a document may hold 16 MiB). */
export const READING_CHARS_KEPT = 4 * 1024 * 1024

const readings = new Map<string, { text: string; reading: DocumentReading }>()
let charsKept = 0

export function readDocument(relPath: string, text: string): DocumentReading {
  const kept = readings.get(relPath)
  if (kept?.text === text) {
    // Most recently read last (the map keeps insertion order).
    readings.delete(relPath)
    readings.set(relPath, kept)
    return kept.reading
  }
  const reading = deepFreeze(readNow(text))
  forget(relPath)
  if (text.length > READING_CHARS_KEPT) return reading
  readings.set(relPath, { text, reading })
  charsKept += text.length
  while (readings.size > READINGS_KEPT || charsKept > READING_CHARS_KEPT) forget(readings.keys().next().value!)
  return reading
}

function forget(relPath: string): void {
  const kept = readings.get(relPath)
  if (!kept) return
  readings.delete(relPath)
  charsKept -= kept.text.length
}

function readNow(text: string): DocumentReading {
  checkDocumentText(text)
  const frontMatter = splitFrontMatter(text)
  // Region markers are literal `insitu:` comments: a text without the word has none (most
  // documents of a project; scanning them for fences and markers is most of their cost).
  const hasMarkers = text.includes('insitu:')
  const scan = hasMarkers ? scanRegions(text, frontMatter.bodyOffset) : { regions: [], unterminated: null }
  return {
    frontMatter: { bodyOffset: frontMatter.bodyOffset, hasData: Boolean(frontMatter.data) },
    regions: scan.regions,
    unterminated: scan.unterminated,
    strayEnds: hasMarkers ? strayEndLines(text, frontMatter.bodyOffset) : [],
    materializations: materializationJobs(frontMatter.data, text),
  }
}

function deepFreeze<T>(value: T): T {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return value
  for (const key of Reflect.ownKeys(value)) deepFreeze((value as Record<PropertyKey, unknown>)[key])
  return Object.freeze(value)
}
