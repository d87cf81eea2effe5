/**
 * Python's `str.casefold()`: the templates' `casefold` string method (str-methods.ts), and the
 * key src/values/python-casefold.ts sorts the `tree` builtin's names by (SPEC §11: tree).
 *
 * Contract: `pythonCasefold(text)` is Python 3.11's `text.casefold()` (full Unicode case folding,
 * from the generated python-casefold-table.ts): `Straße` → `strasse`, `ǅ` → `ǆ`, `ﬁ` → `fi`,
 * Cherokee small letters → capitals. Not `toLowerCase()`, which keeps `ß` and folds per locale
 * data of its own.
 */
import { CASEFOLD_TABLE } from './python-casefold-table.js'

let folds: Map<number, string> | undefined

function foldTable(): Map<number, string> {
  if (folds) return folds
  folds = new Map()
  for (const entry of CASEFOLD_TABLE.split(',')) {
    const [from = '', to = ''] = entry.split(':')
    folds.set(parseInt(from, 16), String.fromCodePoint(...to.split(' ').map((hex) => parseInt(hex, 16))))
  }
  return folds
}

// ASCII text without capitals folds to itself (the common case: no table look-ups).
const FOLDS_TO_ITSELF = /^[\0-@[-\x7f]*$/

export function pythonCasefold(text: string): string {
  if (FOLDS_TO_ITSELF.test(text)) return text
  const table = foldTable()
  let out = ''
  for (const char of text) out += table.get(char.codePointAt(0) as number) ?? char
  return out
}
