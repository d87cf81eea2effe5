/**
 * Python's string order (`compareCodePoints`: by Unicode code point, as `sorted()` orders
 * strings). It lives with the template engine, which is self-contained
 * (src/jinja/code-point-order.ts: its contract); the rest of src/ imports it from here.
 */
export * from '../jinja/code-point-order.js'
