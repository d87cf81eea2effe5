import { describe, expect, it } from 'vitest'
import { isPythonFloat, numberOf, PythonFloat, pythonFloat } from '../../src/values/python-float.js'
import { pythonJsonDumps } from '../../src/values/python-json.js'

describe('the Python number model', () => {
  it('boxes integral floats only', () => {
    expect(isPythonFloat(pythonFloat(2))).toBe(true)
    expect(pythonFloat(1.5)).toBe(1.5)
    expect(numberOf(pythonFloat(-0))).toBe(-0)
    expect(numberOf(10n)).toBe(10)
    expect(JSON.stringify({ a: new PythonFloat(2) })).toBe('{"a":2}')
  })

  it("prints as Python's str() of the float, so templates show 2.0 (expected text from Python 3.11)", () => {
    expect([new PythonFloat(2), new PythonFloat(-0), new PythonFloat(1e16), new PythonFloat(1e3)].map(String)).toEqual(['2.0', '-0.0', '1e+16', '1000.0'])
  })

  it('writes the float kind as Python json.dumps does (expected text from Python 3.11)', () => {
    const value = { a: pythonFloat(2), b: 2, c: 10n ** 20n, d: pythonFloat(-0), e: pythonFloat(1e3), f: [1.5, pythonFloat(1e16)] }
    expect(pythonJsonDumps(value)).toBe('{"a": 2.0, "b": 2, "c": 100000000000000000000, "d": -0.0, "e": 1000.0, "f": [1.5, 1e+16]}')
  })
})
