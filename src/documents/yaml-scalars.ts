/**
 * YAML 1.2 scalars as ruamel.yaml's round-trip loader (0.19, `YAML(typ='rt')`) resolves and
 * constructs them: the Python implementation reads front matter with it (SPEC §11).
 *
 * Contract:
 * - `resolvePlain(text)` is the tag ruamel's implicit resolver gives a plain scalar of that text
 *   (`'null' | 'bool' | 'int' | 'float' | 'timestamp' | 'merge' | 'value' | 'str'`): candidates
 *   are picked by the first character, tried in ruamel's order (bool, float, int, merge, null,
 *   timestamp, value), each regex anchored as Python's `re.match(...$)` (a final `\n` may follow).
 *   So `yes`, `on`, `-.nan` and `1,000` are strings, `017` and `1_000` ints, `1e3` a float.
 * - `constructInt`, `constructFloat`, `constructBool`, `constructTimestamp` build the value of a
 *   scalar with that tag (implicit or explicit `!!int` …) in the value model of
 *   values/python-float.ts: an int is a safe-integer `number` or a `bigint`, a float a
 *   non-integral `number` or a `PythonFloat` box (`2.0`, `1e3`, `-0.0`), `.inf`/`.nan` plain
 *   numbers. Where ruamel's constructor raises (`-_` → IndexError, `2024-02-30` → ValueError, an
 *   offset of 24 h, `!!bool maybe`), they throw a `YamlScalarError` whose message says why.
 * - A timestamp is a `YamlTimestamp`: `text` is Python's `str()` of what ruamel builds, the text
 *   the Python implementation indexes (SPEC §11): `2024-03-01` for a date; for a datetime its
 *   `isoformat()` with the separator as written, `T` for `T` or `t` and one space for spaces
 *   (`2024-03-01 10:20:30`, `2024-03-01T10:20:30`, `2024-03-01 10:20:30+00:00` for
 *   `2024-03-01 10:20:30 Z`, `2024-03-01T10:20:30.500000+02:00`: ruamel's `TimeStamp.__str__`
 *   is `isoformat('T' if written with T else ' ')`, a plain `datetime`'s is `isoformat(' ')`); a
 *   fraction is rounded to microseconds as ruamel rounds it. `identity` is equal for timestamps
 *   Python compares equal (the same instant for aware datetimes; a date never equals a datetime;
 *   the separator plays no part).
 */
import { PythonFloat, pythonFloat } from '../values/python-float.js'

export type PlainTag = 'null' | 'bool' | 'int' | 'float' | 'timestamp' | 'merge' | 'value' | 'str'

/** A scalar ruamel's constructor rejects. */
export class YamlScalarError extends Error {
  override name = 'YamlScalarError'
}

export interface YamlTimestamp {
  /** Python's `str()` of the date or datetime ruamel builds: the separator as written */
  text: string
  /** equal exactly when Python's `==` holds between the two values */
  identity: string
}

const BOOL = /^(?:true|True|TRUE|false|False|FALSE)$/
const FLOAT =
  /^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+]?[0-9]+)?|[-+]?(?:[0-9][0-9_]*)(?:[eE][-+]?[0-9]+)|[-+]?\.[0-9_]+(?:[eE][-+][0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$/
const INT = /^(?:[-+]?0b[0-1_]+|[-+]?0o?[0-7_]+|[-+]?[0-9_]+|[-+]?0x[0-9a-fA-F_]+)$/
const MERGE = /^(?:<<)$/
const NULL = /^(?:~|null|Null|NULL|)$/
const TIMESTAMP =
  /^(?:[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]|[0-9][0-9][0-9][0-9]-[0-9][0-9]?-[0-9][0-9]?(?:[Tt]|[ \t]+)[0-9][0-9]?:[0-9][0-9]:[0-9][0-9](?:\.[0-9]*)?(?:[ \t]*(?:Z|[-+][0-9][0-9]?(?::[0-9][0-9])?))?)$/
const VALUE = /^(?:=)$/

/** ruamel's `timestamp_regexp` (util.py), which builds the value once the resolver chose the tag. */
const TIMESTAMP_PARTS =
  /^([0-9][0-9][0-9][0-9])-([0-9][0-9]?)-([0-9][0-9]?)(?:(?:([Tt])|[ \t]+)([0-9][0-9]?):([0-9][0-9]):([0-9][0-9])(?:\.([0-9]*))?(?:[ \t]*(Z|([-+])([0-9][0-9]?)(?::([0-9][0-9]))?))?)?$/

const RESOLVERS: ReadonlyArray<[PlainTag, RegExp, string]> = [
  ['bool', BOOL, 'tTfF'],
  ['float', FLOAT, '-+0123456789.'],
  ['int', INT, '-+0123456789'],
  ['merge', MERGE, '<'],
  ['null', NULL, '~nN'],
  ['timestamp', TIMESTAMP, '0123456789'],
  ['value', VALUE, '='],
]

/** Python's `re.match(pattern + '$')`: `$` also matches before a final newline. */
function pythonMatch(pattern: RegExp, text: string): boolean {
  return pattern.test(text) || (text.endsWith('\n') && pattern.test(text.slice(0, -1)))
}

export function resolvePlain(text: string): PlainTag {
  if (text === '') return 'null'
  const first = text[0]!
  for (const [tag, pattern, firsts] of RESOLVERS) {
    if (firsts.includes(first) && pythonMatch(pattern, text)) return tag
  }
  return 'str'
}

/** `bool_values[value.lower()]` of ruamel's SafeConstructor. */
export function constructBool(text: string): boolean {
  const value = BOOL_VALUES.get(text.toLowerCase())
  if (value === undefined) throw new YamlScalarError(`not a boolean: ${text}`)
  return value
}

const BOOL_VALUES = new Map([
  ['yes', true],
  ['no', false],
  ['y', true],
  ['n', false],
  ['true', true],
  ['false', false],
  ['on', true],
  ['off', false],
])

/** ruamel's `construct_yaml_int` for YAML 1.2 (`0o17` octal, `017` decimal, `_` ignored). */
export function constructInt(text: string): number | bigint {
  let digits = text.replaceAll('_', '')
  let negative = false
  if (digits[0] === '+' || digits[0] === '-') {
    negative = digits[0] === '-'
    digits = digits.slice(1)
  }
  // Python indexes value_s[0] / value_s[2]: an empty rest raises IndexError (`-_`, `0o_`).
  const radix = digits.startsWith('0b') ? 2 : digits.startsWith('0x') ? 16 : digits.startsWith('0o') ? 8 : 10
  const body = radix === 10 ? digits : digits.slice(2)
  if (body === '') throw new YamlScalarError(`not an integer: ${text} (string index out of range)`)
  const valid = { 2: /^[01]+$/, 8: /^[0-7]+$/, 10: /^[0-9]+$/, 16: /^[0-9a-fA-F]+$/ }[radix]
  if (!valid.test(body)) throw new YamlScalarError(`invalid literal for int() with base ${radix}: ${text}`)
  const prefix = { 2: '0b', 8: '0o', 10: '', 16: '0x' }[radix]
  const magnitude = BigInt(prefix + (radix === 10 ? body.replace(/^0+(?=.)/, '') : body))
  return intValue(negative ? -magnitude : magnitude)
}

/** A Python int in the value model: a safe integer as a number, else a bigint. */
export function intValue(value: bigint): number | bigint {
  const small = Number(value)
  return Number.isSafeInteger(small) ? small || 0 : value
}

const PYTHON_FLOAT = /^(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:e[-+]?[0-9]+)?$/

/** ruamel's `construct_yaml_float`: `_` ignored, `.inf`/`.nan`, Python's `float()` otherwise. */
export function constructFloat(text: string): number | PythonFloat {
  let value = text.replaceAll('_', '').toLowerCase()
  let sign = 1
  if (value[0] === '-') sign = -1
  if (value[0] === '+' || value[0] === '-') value = value.slice(1)
  if (value === '.inf') return sign * Infinity
  if (value === '.nan') return NaN
  // Python's float() also takes surrounding whitespace and inf / infinity / nan (`!!float inf`).
  const bare = value.trim()
  let magnitude: number
  if (bare === 'inf' || bare === 'infinity') magnitude = Infinity
  else if (bare === 'nan') magnitude = NaN
  else if (PYTHON_FLOAT.test(bare)) magnitude = Number(bare)
  else throw new YamlScalarError(`could not convert string to float: '${value}'`)
  return pythonFloat(sign * magnitude)
}

/** ruamel's `construct_yaml_timestamp` + `create_timestamp`, then Python's `str()` of the value. */
export function constructTimestamp(text: string): YamlTimestamp {
  const match = TIMESTAMP_PARTS.exec(text)
  if (match === null) throw new YamlScalarError(`failed to construct timestamp from "${text}"`)
  const [, yearText, monthText, dayText, separator, hourText, minuteText, secondText, fraction, tz, tzSign, tzHour, tzMinute] = match
  const year = Number(yearText)
  const month = Number(monthText)
  const day = Number(dayText)
  checkDate(year, month, day)
  if (hourText === undefined) {
    const iso = dateText(year, month, day)
    return { text: iso, identity: `date:${iso}` }
  }
  const hour = Number(hourText)
  const minute = Number(minuteText)
  const second = Number(secondText)
  if (hour > 23) throw new YamlScalarError('hour must be in 0..23')
  if (minute > 59) throw new YamlScalarError('minute must be in 0..59')
  if (second > 59) throw new YamlScalarError('second must be in 0..59')
  let micro = 0
  let carrySecond = false
  if (fraction) {
    micro = Number(fraction.slice(0, 6).padEnd(6, '0'))
    if (fraction.length > 6 && Number(fraction[6]) > 4) micro++
    if (micro > 999_999) {
      // create_timestamp: the fraction becomes 0 and one second is added
      micro = 0
      carrySecond = true
    }
  }
  let offsetMinutes: number | null = null
  if (tzSign !== undefined) {
    offsetMinutes = (Number(tzHour) * 60 + (tzMinute === undefined ? 0 : Number(tzMinute))) * (tzSign === '-' ? -1 : 1)
    if (Math.abs(offsetMinutes) >= 24 * 60) {
      throw new YamlScalarError('offset must be a timedelta strictly between -timedelta(hours=24) and timedelta(hours=24)')
    }
  } else if (tz === 'Z') {
    offsetMinutes = 0
  }
  let days = daysFromCivil(year, month, day)
  let seconds = hour * 3600 + minute * 60 + second + (carrySecond ? 1 : 0)
  days += Math.floor(seconds / 86400)
  seconds %= 86400
  const civil = civilFromDays(days)
  if (civil.year > 9999) throw new YamlScalarError('date value out of range')
  const clock = [Math.floor(seconds / 3600), Math.floor((seconds % 3600) / 60), seconds % 60].map((n) => pad(n, 2)).join(':')
  const local = `${dateText(civil.year, civil.month, civil.day)}T${clock}${micro > 0 ? `.${pad(micro, 6)}` : ''}`
  // str(): `T` where the text has `T` or `t` (a TimeStamp whose _yaml['t'] is set), else a space
  // (a plain datetime, or a TimeStamp with an offset written after a space)
  const written = separator === undefined ? local.replace('T', ' ') : local
  if (offsetMinutes === null) return { text: written, identity: `naive:${local}` }
  const instant = (BigInt(days) * 86400n + BigInt(seconds) - BigInt(offsetMinutes * 60)) * 1_000_000n + BigInt(micro)
  return { text: written + offsetText(offsetMinutes), identity: `aware:${instant}` }
}

function checkDate(year: number, month: number, day: number): void {
  if (year < 1) throw new YamlScalarError(`year ${year} is out of range`)
  if (month < 1 || month > 12) throw new YamlScalarError('month must be in 1..12')
  if (day < 1 || day > daysInMonth(year, month)) throw new YamlScalarError('day is out of range for month')
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28
  return [4, 6, 9, 11].includes(month) ? 30 : 31
}

/** Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm). */
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year
  const era = Math.floor(y / 400)
  const yoe = y - era * 400
  const doy = Math.floor((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5) + day - 1
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy
  return era * 146097 + doe - 719468
}

function civilFromDays(days: number): { year: number; month: number; day: number } {
  const z = days + 719468
  const era = Math.floor(z / 146097)
  const doe = z - era * 146097
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365)
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100))
  const mp = Math.floor((5 * doy + 2) / 153)
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1
  const month = mp < 10 ? mp + 3 : mp - 9
  return { year: yoe + era * 400 + (month <= 2 ? 1 : 0), month, day }
}

function dateText(year: number, month: number, day: number): string {
  return `${pad(year, 4)}-${pad(month, 2)}-${pad(day, 2)}`
}

/** `+HH:MM` as `datetime.isoformat()` writes a whole-minute UTC offset. */
function offsetText(minutes: number): string {
  const sign = minutes < 0 ? '-' : '+'
  const magnitude = Math.abs(minutes)
  return `${sign}${pad(Math.floor(magnitude / 60), 2)}:${pad(magnitude % 60, 2)}`
}

function pad(n: number, width: number): string {
  return String(n).padStart(width, '0')
}
