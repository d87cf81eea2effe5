/**
 * JSON text exactly as Python's `json.dumps` writes it (`pythonJsonDumps`, `pythonJsonText`,
 * Jinja's `jinjaToJson`). It lives with the template engine, which is self-contained
 * (src/jinja/python-json.ts: its contract); the rest of src/ imports it from here.
 */
export * from '../jinja/python-json.js'
