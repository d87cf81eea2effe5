/**
 * plugin/user-errors.ts: the mark of a user's error holds across copies of the module (the
 * published entry and dist/runtime.cjs each bundle one; runtime-module.ts), and only for errors
 * `userError` made.
 */
import { describe, expect, it } from 'vitest'
import { isUserError, userError } from '../../src/plugin/user-errors.js'

/** Another instance of the module, as a second bundle holds it (vitest caches modules by id: the query makes a new one). */
async function anotherCopy(): Promise<typeof import('../../src/plugin/user-errors.js')> {
  const copy = (await import(/* @vite-ignore */ `../../src/plugin/user-errors.js?copy=${Date.now()}`)) as typeof import('../../src/plugin/user-errors.js')
  expect(copy.userError).not.toBe(userError)
  return copy
}

describe('user errors', () => {
  it('are told apart by any copy of the module', async () => {
    const copy = await anotherCopy()
    expect(isUserError(copy.userError('a region failed'))).toBe(true)
    expect(copy.isUserError(userError('a region failed'))).toBe(true)
  })

  it('have no stack frames, and other errors are not theirs', async () => {
    const copy = await anotherCopy()
    const error = userError('insitu.toml:3:1: bad')
    expect(error.stack).toBe('')
    expect(error.message).toBe('insitu.toml:3:1: bad')
    expect(Object.keys(error)).toEqual([])
    for (const check of [isUserError, copy.isUserError]) {
      expect(check(new Error('insitu.toml:3:1: bad'))).toBe(false)
      expect(check({ message: 'not an error' })).toBe(false)
      expect(check(undefined)).toBe(false)
    }
  })
})
