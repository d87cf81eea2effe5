/**
 * Unit tests of the boundary types (SPEC §4): src/protocol/schemas.ts.
 *
 * For each type: defaults are filled (whole objects compared, and key order checked through
 * `JSON.stringify`, since writers emit every field in SPEC order), unknown fields are rejected
 * with a message naming the field path, required fields are enforced, and the numeric and
 * literal constraints (Location depth >= 0, Diagnostic line >= 1, protocol 1) hold.
 */
import { describe, expect, it } from 'vitest'
import {
  BoundaryError,
  CAPABILITY_KINDS,
  CapabilityKind,
  Diagnostic,
  formatIssues,
  InitializeRequest,
  InitializeResult,
  InvocationRequest,
  InvocationResult,
  JsonValue,
  Location,
  parseBoundary,
  ResourceGetParams,
  ResourceRead,
} from '../../src/protocol/schemas.js'

/** The message of the BoundaryError thrown by parsing `value`. */
function boundaryMessage(schema: Parameters<typeof parseBoundary>[0], value: unknown, what?: string): string {
  try {
    parseBoundary(schema, value, what)
  } catch (error) {
    expect(error).toBeInstanceOf(BoundaryError)
    expect((error as BoundaryError).name).toBe('BoundaryError')
    expect((error as BoundaryError).issues.length).toBeGreaterThan(0)
    return (error as Error).message
  }
  throw new Error(`expected ${JSON.stringify(value)} to be rejected`)
}

const DEPTH_TOO_SMALL = 'Too small: expected number to be >=0'
const LINE_TOO_SMALL = 'Too small: expected number to be >=1'

describe('Location', () => {
  it('fills root "." and depth 0, in SPEC key order', () => {
    const location = parseBoundary(Location, { path: 'README.md', directory: '' })
    expect(location).toEqual({ path: 'README.md', directory: '', root: '.', depth: 0 })
    expect(JSON.stringify(location)).toBe('{"path":"README.md","directory":"","root":".","depth":0}')
  })

  it('keeps given values (the SPEC example for docs/a/b.md)', () => {
    const input = { depth: 2, root: '.', directory: 'docs/a', path: 'docs/a/b.md' }
    const location = parseBoundary(Location, input)
    expect(JSON.stringify(location)).toBe('{"path":"docs/a/b.md","directory":"docs/a","root":".","depth":2}')
  })

  it('requires path and directory', () => {
    expect(boundaryMessage(Location, { directory: '' })).toBe('path: field required')
    expect(boundaryMessage(Location, { path: 'a.md' })).toBe('directory: field required')
    expect(boundaryMessage(Location, {})).toBe('path: field required; directory: field required')
    expect(boundaryMessage(Location, null)).toBe('Invalid input: expected object, received null')
  })

  it('accepts depth 0 and rejects a negative or fractional depth', () => {
    expect(parseBoundary(Location, { path: 'a', directory: '', depth: 0 }).depth).toBe(0)
    expect(boundaryMessage(Location, { path: 'a', directory: '', depth: -1 })).toBe(`depth: ${DEPTH_TOO_SMALL}`)
    expect(boundaryMessage(Location, { path: 'a', directory: '', depth: 1.5 })).toBe(
      'depth: Invalid input: expected int, received number',
    )
    expect(boundaryMessage(Location, { path: 'a', directory: '', depth: '1' })).toBe(
      'depth: Invalid input: expected number, received string',
    )
  })

  it('rejects unknown fields by name', () => {
    expect(boundaryMessage(Location, { path: 'a', directory: '', extra: 1 })).toBe('unknown field extra')
    expect(boundaryMessage(Location, { path: 'a', directory: '', b: 1, a: 2 })).toBe('unknown fields b, a')
    expect(boundaryMessage(Location, { path: 'a', directory: '', extra: 1 }, 'location')).toBe(
      'invalid location: unknown field extra',
    )
  })
})

describe('Diagnostic', () => {
  it('fills path, line and code with null, in SPEC key order', () => {
    const diagnostic = parseBoundary(Diagnostic, { message: 'broken link', severity: 'warning' })
    expect(diagnostic).toEqual({ severity: 'warning', message: 'broken link', path: null, line: null, code: null })
    expect(JSON.stringify(diagnostic)).toBe('{"severity":"warning","message":"broken link","path":null,"line":null,"code":null}')
  })

  it('keeps given values', () => {
    const full = { severity: 'error', message: 'm', path: 'docs/a.md', line: 1, code: 'E1' }
    expect(parseBoundary(Diagnostic, full)).toEqual(full)
    expect(parseBoundary(Diagnostic, { ...full, path: null, line: null, code: null })).toEqual({
      ...full,
      path: null,
      line: null,
      code: null,
    })
  })

  it('accepts exactly the severities error, warning, info', () => {
    for (const severity of ['error', 'warning', 'info']) {
      expect(parseBoundary(Diagnostic, { severity, message: 'm' }).severity).toBe(severity)
    }
    expect(boundaryMessage(Diagnostic, { severity: 'fatal', message: 'm' })).toBe(
      'severity: Invalid option: expected one of "error"|"warning"|"info"',
    )
  })

  it('requires severity and message', () => {
    expect(boundaryMessage(Diagnostic, { message: 'm' })).toBe('severity: field required')
    expect(boundaryMessage(Diagnostic, { severity: 'info' })).toBe('message: field required')
  })

  it('requires line >= 1 (an integer) when given', () => {
    expect(parseBoundary(Diagnostic, { severity: 'info', message: 'm', line: 1 }).line).toBe(1)
    expect(boundaryMessage(Diagnostic, { severity: 'info', message: 'm', line: 0 })).toBe(`line: ${LINE_TOO_SMALL}`)
    expect(boundaryMessage(Diagnostic, { severity: 'info', message: 'm', line: 2.5 })).toBe(
      'line: Invalid input: expected int, received number',
    )
  })

  it('rejects unknown fields', () => {
    expect(boundaryMessage(Diagnostic, { severity: 'info', message: 'm', column: 3 })).toBe('unknown field column')
  })
})

describe('InitializeRequest', () => {
  it('accepts the SPEC shape', () => {
    const request = { protocol: 1, root: '/work/project', extension: 'acme/hello' }
    expect(parseBoundary(InitializeRequest, request)).toEqual(request)
    expect(JSON.stringify(parseBoundary(InitializeRequest, { extension: 'e', root: '/r', protocol: 1 }))).toBe(
      '{"protocol":1,"root":"/r","extension":"e"}',
    )
  })

  it('accepts only protocol 1', () => {
    expect(boundaryMessage(InitializeRequest, { protocol: 2, root: '/', extension: 'e' })).toBe(
      'protocol: Invalid input: expected 1',
    )
    expect(boundaryMessage(InitializeRequest, { protocol: '1', root: '/', extension: 'e' })).toBe(
      'protocol: Invalid input: expected 1',
    )
    expect(boundaryMessage(InitializeRequest, { root: '/', extension: 'e' })).toBe('protocol: field required')
  })

  it('requires root and extension and rejects unknown fields', () => {
    expect(boundaryMessage(InitializeRequest, { protocol: 1, extension: 'e' })).toBe('root: field required')
    expect(boundaryMessage(InitializeRequest, { protocol: 1, root: '/' })).toBe('extension: field required')
    expect(boundaryMessage(InitializeRequest, { protocol: 1, root: '/', extension: 'e', version: '1' })).toBe(
      'unknown field version',
    )
  })
})

describe('InitializeResult', () => {
  it('fills capabilities with {}', () => {
    const result = parseBoundary(InitializeResult, { name: 'acme/hello', version: '1.0.0', protocol: 1 })
    expect(result).toEqual({ name: 'acme/hello', version: '1.0.0', protocol: 1, capabilities: {} })
    expect(JSON.stringify(result)).toBe('{"name":"acme/hello","version":"1.0.0","protocol":1,"capabilities":{}}')
  })

  it('keeps the capabilities the Python SDK reports', () => {
    const capabilities = {
      resource: {},
      transform: { hello: { params: { type: 'object' } } },
      renderer: {},
      validator: {},
    }
    const result = parseBoundary(InitializeResult, { name: 'n', version: '1', protocol: 1, capabilities })
    expect(result.capabilities).toEqual(capabilities)
  })

  it('accepts only protocol 1, requires name and version, rejects unknown fields', () => {
    expect(boundaryMessage(InitializeResult, { name: 'n', version: '1', protocol: 0 })).toBe(
      'protocol: Invalid input: expected 1',
    )
    expect(boundaryMessage(InitializeResult, { version: '1', protocol: 1 })).toBe('name: field required')
    expect(boundaryMessage(InitializeResult, { name: 'n', protocol: 1 })).toBe('version: field required')
    expect(boundaryMessage(InitializeResult, { name: 'n', version: '1', protocol: 1, sdk: 'py' })).toBe('unknown field sdk')
  })
})

describe('InvocationRequest', () => {
  const location = { path: 'docs/a/b.md', directory: 'docs/a', root: '.', depth: 2 }

  it('fills options {}, value null, trace [] and the Location defaults, in SPEC key order', () => {
    const request = parseBoundary(InvocationRequest, { name: 'hello', location: { path: 'README.md', directory: '' } })
    expect(request).toEqual({
      name: 'hello',
      options: {},
      location: { path: 'README.md', directory: '', root: '.', depth: 0 },
      value: null,
      trace: [],
    })
    expect(JSON.stringify(request)).toBe(
      '{"name":"hello","options":{},"location":{"path":"README.md","directory":"","root":".","depth":0},"value":null,"trace":[]}',
    )
  })

  it('keeps arbitrary JSON options and value', () => {
    const input = {
      name: 'tasks',
      options: { id: 'tasks', model: 'open_tasks', params: { n: 1, list: [1, 'é', null, true] } },
      location,
      value: [{ a: 1 }, 'two', 3.5, false, null],
      trace: ['transform:tasks', 'resource:loop'],
    }
    expect(parseBoundary(InvocationRequest, input)).toEqual(input)
  })

  it('requires name and location', () => {
    expect(boundaryMessage(InvocationRequest, { location })).toBe('name: field required')
    expect(boundaryMessage(InvocationRequest, { name: 'x' })).toBe('location: field required')
    expect(boundaryMessage(InvocationRequest, { name: 'x', location: { path: 'a' } })).toBe(
      'location.directory: field required',
    )
  })

  it('rejects unknown fields, naming nested paths', () => {
    expect(boundaryMessage(InvocationRequest, { name: 'x', location, mode: 'fast' })).toBe('unknown field mode')
    expect(boundaryMessage(InvocationRequest, { name: 'x', location: { ...location, extra: true } })).toBe(
      'unknown field location.extra',
    )
    expect(
      boundaryMessage(InvocationRequest, { name: 'x', location: { ...location, extra: true } }, 'insitu.transform params'),
    ).toBe('invalid insitu.transform params: unknown field location.extra')
  })

  it('checks nested constraints with their path', () => {
    expect(boundaryMessage(InvocationRequest, { name: 'x', location: { ...location, depth: -1 } })).toBe(
      `location.depth: ${DEPTH_TOO_SMALL}`,
    )
    expect(boundaryMessage(InvocationRequest, { name: 'x', location, trace: ['ok', 5] })).toBe(
      'trace[1]: Invalid input: expected string, received number',
    )
  })

  it('rejects values that are not JSON', () => {
    expect(boundaryMessage(InvocationRequest, { name: 'x', location, value: Number.NaN })).toBe('value: Invalid input')
    expect(boundaryMessage(InvocationRequest, { name: 'x', location, options: { f: () => 1 } })).toBe(
      'options.f: Invalid input',
    )
    expect(JsonValue.safeParse({ a: [1, { b: 'c' }] }).success).toBe(true)
    expect(JsonValue.safeParse(Number.POSITIVE_INFINITY).success).toBe(false)
  })
})

describe('InvocationResult', () => {
  it('emits every field: {"content":"x","value":null,"diagnostics":[],"dependencies":[]}', () => {
    const result = parseBoundary(InvocationResult, { content: 'x' })
    expect(result).toEqual({ content: 'x', value: null, diagnostics: [], dependencies: [] })
    expect(JSON.stringify(result)).toBe('{"content":"x","value":null,"diagnostics":[],"dependencies":[]}')
  })

  it('fills everything from {} and keeps the order when input order differs', () => {
    expect(JSON.stringify(parseBoundary(InvocationResult, {}))).toBe(
      '{"content":null,"value":null,"diagnostics":[],"dependencies":[]}',
    )
    expect(JSON.stringify(parseBoundary(InvocationResult, { dependencies: ['fs:file:a.md'], value: { rows: [] } }))).toBe(
      '{"content":null,"value":{"rows":[]},"diagnostics":[],"dependencies":["fs:file:a.md"]}',
    )
  })

  it('fills the defaults of nested diagnostics', () => {
    const result = parseBoundary(InvocationResult, { diagnostics: [{ severity: 'error', message: 'bad', line: 3 }] })
    expect(result.diagnostics).toEqual([{ severity: 'error', message: 'bad', path: null, line: 3, code: null }])
  })

  it('rejects unknown fields and bad diagnostics by path', () => {
    expect(boundaryMessage(InvocationResult, { content: 'x', extra: 1 })).toBe('unknown field extra')
    expect(boundaryMessage(InvocationResult, { diagnostics: [{ severity: 'info', message: 'm', extra: 1 }] })).toBe(
      'unknown field diagnostics[0].extra',
    )
    expect(
      boundaryMessage(InvocationResult, {
        diagnostics: [
          { severity: 'info', message: 'ok' },
          { severity: 'info', message: 'm', line: 0 },
        ],
      }),
    ).toBe(`diagnostics[1].line: ${LINE_TOO_SMALL}`)
    expect(boundaryMessage(InvocationResult, { content: 5 })).toBe('content: Invalid input: expected string, received number')
    expect(boundaryMessage(InvocationResult, { dependencies: 'fs:file:a' })).toBe(
      'dependencies: Invalid input: expected array, received string',
    )
  })
})

describe('ResourceRead', () => {
  it('requires value but allows null, and fills dependencies', () => {
    expect(parseBoundary(ResourceRead, { value: null })).toEqual({ value: null, dependencies: [] })
    expect(JSON.stringify(parseBoundary(ResourceRead, { dependencies: ['r'], value: 'text' }))).toBe(
      '{"value":"text","dependencies":["r"]}',
    )
    expect(boundaryMessage(ResourceRead, {})).toBe('value: field required')
    expect(boundaryMessage(ResourceRead, { value: undefined, dependencies: [] })).toBe('value: field required')
  })

  it('rejects unknown fields', () => {
    expect(boundaryMessage(ResourceRead, { value: 1, cached: true })).toBe('unknown field cached')
  })
})

describe('host.resource.get params (ResourceGetParams)', () => {
  const location = { path: 'docs/a.md', directory: 'docs', root: '.', depth: 1 }

  it('fills trace [] and the Location defaults', () => {
    const params = parseBoundary(ResourceGetParams, { resource: 'fs:file:a.md', location: { path: 'a.md', directory: '' } })
    expect(params).toEqual({
      resource: 'fs:file:a.md',
      location: { path: 'a.md', directory: '', root: '.', depth: 0 },
      trace: [],
    })
    expect(JSON.stringify(params)).toBe(
      '{"resource":"fs:file:a.md","location":{"path":"a.md","directory":"","root":".","depth":0},"trace":[]}',
    )
  })

  it('requires resource and location', () => {
    expect(boundaryMessage(ResourceGetParams, { location }, 'host.resource.get params')).toBe(
      'invalid host.resource.get params: resource: field required',
    )
    expect(boundaryMessage(ResourceGetParams, { resource: 'x' }, 'host.resource.get params')).toBe(
      'invalid host.resource.get params: location: field required',
    )
  })

  it('rejects extra keys (stricter than the Python implementation), top-level and nested', () => {
    expect(boundaryMessage(ResourceGetParams, { resource: 'x', location, depth: 1 })).toBe('unknown field depth')
    expect(boundaryMessage(ResourceGetParams, { resource: 'x', location: { ...location, extra: 1 } })).toBe(
      'unknown field location.extra',
    )
  })
})

describe('CapabilityKind', () => {
  it('is exactly resource, transform, renderer, validator', () => {
    expect([...CAPABILITY_KINDS]).toEqual(['resource', 'transform', 'renderer', 'validator'])
    for (const kind of CAPABILITY_KINDS) expect(parseBoundary(CapabilityKind, kind)).toBe(kind)
    expect(boundaryMessage(CapabilityKind, 'filter')).toBe(
      'Invalid option: expected one of "resource"|"transform"|"renderer"|"validator"',
    )
  })
})

describe('formatIssues', () => {
  it('formats paths with dots and brackets, and prefixes what was parsed', () => {
    const parsed = InvocationResult.safeParse({ diagnostics: [{ severity: 'info', message: 7 }] })
    expect(parsed.success).toBe(false)
    if (parsed.success) return
    expect(formatIssues(parsed.error.issues)).toBe('diagnostics[0].message: Invalid input: expected string, received number')
    expect(formatIssues(parsed.error.issues, 'insitu.render result')).toBe(
      'invalid insitu.render result: diagnostics[0].message: Invalid input: expected string, received number',
    )
  })

  it('says `field required` only for fields missing from the given input', () => {
    const input = { diagnostics: [{ severity: 'info' }, { severity: 'info', message: 7 }] }
    const parsed = InvocationResult.safeParse(input)
    expect(parsed.success).toBe(false)
    if (parsed.success) return
    expect(formatIssues(parsed.error.issues, undefined, input)).toBe(
      'diagnostics[0].message: field required; diagnostics[1].message: Invalid input: expected string, received number',
    )
  })
})
