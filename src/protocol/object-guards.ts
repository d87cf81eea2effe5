/**
 * What kind of object an untyped value is (JSON-RPC messages, TOML tables, template data).
 *
 * - `isObject(v)`: a non-null object that is not an array, whatever its prototype (class
 *   instances, Dates and Maps included).
 * - `isPlainObject(v)`: a non-null object whose prototype is `Object.prototype` or `null`
 *   (object literals, `JSON.parse` output, smol-toml tables); arrays, Dates, Maps and other
 *   class instances are not.
 * Internal helpers: not part of the protocol's public exports (index.ts).
 */

/** A non-null, non-array object. */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** An object literal or a null-prototype object. */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false
  const proto: unknown = Object.getPrototypeOf(value)
  return proto === Object.prototype || proto === null
}
