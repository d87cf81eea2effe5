/**
 * Python's whitespace, as `str.isspace()`, `str.split()` / `strip()` without arguments and `\s`
 * of Python's `re` on str patterns see it: the body of a regular expression character class.
 * JavaScript's `\s` is not it: it holds U+FEFF, which Python's does not, and lacks `\x1c`–`\x1f`
 * and `\x85`, which Python's has.
 */
export const PY_SPACE = '\\t\\n\\x0b\\x0c\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000'
