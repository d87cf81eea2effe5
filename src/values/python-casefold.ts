/**
 * Python's `str.casefold()` and the order the `tree` builtin sorts names in (SPEC §11: tree).
 *
 * Contract:
 * - `pythonCasefold(text)` is Python 3.11's `text.casefold()`: it lives with the template engine,
 *   which is self-contained (src/jinja/python-casefold.ts: its contract), and is re-exported here.
 * - `compareCasefolded(a, b)`: by the folded texts' code points, ties by the texts' own code
 *   points (`compareCodePoints`, not UTF-16 units), as Python's
 *   `sorted(names, key=lambda n: (n.casefold(), n))` orders them.
 */
import { pythonCasefold } from '../jinja/python-casefold.js'
import { compareCodePoints } from './code-point-order.js'

export { pythonCasefold }

export function compareCasefolded(a: string, b: string): number {
  return compareCodePoints(pythonCasefold(a), pythonCasefold(b)) || compareCodePoints(a, b)
}
