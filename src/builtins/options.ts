/**
 * Typed reads of a capability's options (a region's TOML table or a materialization entry),
 * with errors that name the option and the capability.
 */
import { PythonFloat } from '../values/python-float.js'

export function requiredString(options: Record<string, unknown>, key: string, missing: string): string {
  const value = options[key]
  if (value === undefined || value === null || value === '') throw new Error(missing)
  if (typeof value !== 'string') throw new Error(`${key} must be a string`)
  return value
}

export function optionalString(options: Record<string, unknown>, key: string, capability: string): string | undefined {
  const value = options[key]
  if (value === undefined || value === null) return undefined
  if (typeof value !== 'string') throw new Error(`${capability} option ${key} must be a string`)
  return value
}

export function optionalBoolean(options: Record<string, unknown>, key: string, capability: string): boolean | undefined {
  const value = options[key]
  if (value === undefined || value === null) return undefined
  if (typeof value !== 'boolean') throw new Error(`${capability} option ${key} must be a boolean`)
  return value
}

export function optionalInteger(
  options: Record<string, unknown>,
  key: string,
  capability: string,
  min: number,
  max = Number.MAX_SAFE_INTEGER,
): number | undefined {
  const given = options[key]
  if (given === undefined || given === null) return undefined
  // An integral float (`depth = 2.0`) counts, as Python's int() takes it.
  const value = given instanceof PythonFloat ? given.value : given
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new Error(`${capability} option ${key} must be an integer from ${min} to ${max}`)
  }
  return value
}

export function optionalStringArray(options: Record<string, unknown>, key: string, capability: string): string[] {
  const value = options[key]
  if (value === undefined || value === null) return []
  if (!Array.isArray(value) || value.some((v) => typeof v !== 'string')) {
    throw new Error(`${capability} option ${key} must be an array of strings`)
  }
  return value as string[]
}

export function optionalTable(options: Record<string, unknown>, key: string, capability: string): Record<string, unknown> {
  const value = options[key]
  if (value === undefined || value === null) return {}
  if (typeof value !== 'object' || Array.isArray(value) || value instanceof PythonFloat) {
    throw new Error(`${capability} option ${key} must be a table`)
  }
  return value as Record<string, unknown>
}
