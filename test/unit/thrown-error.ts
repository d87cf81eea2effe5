/**
 * The error a call throws, checked to be of an expected class.
 *
 * Contract: `errorOf(type, run)` runs `run` and returns what it threw after asserting that it is an
 * instance of `type`; it fails the test with `expected a <type name>` when `run` throws nothing.
 */
import { expect } from 'vitest'

export function errorOf<E extends Error>(type: abstract new (...args: never[]) => E, run: () => unknown): E {
  try {
    run()
  } catch (error) {
    expect(error).toBeInstanceOf(type)
    return error as E
  }
  throw new Error(`expected a ${type.name}`)
}
