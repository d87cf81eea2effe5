/**
 * Python's two number kinds in JavaScript values: the value model every room shares (YAML front
 * matter, the document index, SQL rows, templates, JSON text). It lives with the template engine,
 * which is self-contained (src/jinja/python-float.ts: its contract); the rest of src/ imports it
 * from here.
 */
export * from '../jinja/python-float.js'
