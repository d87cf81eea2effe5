/**
 * Parsed YAML texts, shared by the readers of one text (issue #17: each render of a document
 * parsed its front matter three times, for its values, the lines of its materializations and
 * the edit of its generated values; at every edit of anything the document reads).
 *
 * Contract:
 * - `yamlDocument(raw, options)` is the yaml package's `parseDocument(raw, options)`, for
 *   `options` one of the option sets exported here: the same text with the same set gives the
 *   same `Document` object while it stays among the last `KEPT_PER_SET` texts of that set.
 * - Callers only read a `Document` (its nodes, ranges and errors), never change it: the next
 *   reader of the same text gets the same object.
 */
import { type Document, parseDocument, type ParseOptions, type DocumentOptions, type SchemaOptions } from 'yaml'

type Options = ParseOptions & DocumentOptions & SchemaOptions

/** What the front matter's values are read with (yaml-read.ts: YAML 1.2 scalars resolved by hand). */
export const READ_VALUES: Readonly<Options> = Object.freeze({ schema: 'failsafe', resolveKnownTags: false, uniqueKeys: false, prettyErrors: false })
/** What generated values are spliced into (frontmatter-write.ts; its errors are shown as the package words them). */
export const WRITE_VALUES: Readonly<Options> = Object.freeze({ schema: 'failsafe', resolveKnownTags: false, uniqueKeys: false })
/** The package's defaults (the lines of keys, frontmatter.ts). */
export const DEFAULTS: Readonly<Options> = Object.freeze({})

/** Texts kept per option set: a document's front matter, and a few being rendered beside it. */
const KEPT_PER_SET = 16

const kept = new Map<Readonly<Options>, Map<string, Document>>()

export function yamlDocument(raw: string, options: Readonly<Options>): Document {
  let documents = kept.get(options)
  if (!documents) kept.set(options, (documents = new Map()))
  const known = documents.get(raw)
  if (known) {
    // The most recently used goes last: the first key is the one to drop.
    documents.delete(raw)
    documents.set(raw, known)
    return known
  }
  const document = parseDocument(raw, options)
  documents.set(raw, document)
  if (documents.size > KEPT_PER_SET) documents.delete(documents.keys().next().value!)
  return document
}
