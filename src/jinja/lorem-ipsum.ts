/**
 * Jinja2 3.1's `lipsum()` global (`jinja2.utils.generate_lorem_ipsum`): random Lorem ipsum
 * paragraphs from Jinja's own word list (`jinja2.constants.LOREM_IPSUM_WORDS`, 186 words).
 *
 * Contract: `loremIpsum(n, html, min, max)` makes `n` paragraphs of `randrange(min, max)` words
 * each, as Jinja does: no word twice in a row, the first capitalized, a comma after a random
 * 3–7 words, a full stop after a random 10–19 (then capitalized again), every paragraph ending
 * in a full stop. `html` wraps each paragraph in `<p>…</p>` (its text escaped), one per line,
 * as Markup; otherwise paragraphs are separated by a blank line. `min >= max` is Python's
 * `ValueError: empty range for randrange() (min, max, max - min)`. The words are random (Math.random):
 * only the shape is the same as Jinja's. Text past limits.ts `MAX_STRING_LENGTH` is refused as
 * it is made; a check point of the time budget per word.
 */
import { valueError } from './errors.js'
import { MAX_STRING_LENGTH, stringPastLimit } from './limits.js'
import { tick } from './render-budget.js'
import { escapeHtml } from './escape.js'
import { Markup } from './values.js'

const WORDS: readonly string[] = [
  'a', 'ac', 'accumsan', 'ad', 'adipiscing', 'aenean', 'aliquam', 'aliquet', 'amet', 'ante',
  'aptent', 'arcu', 'at', 'auctor', 'augue', 'bibendum', 'blandit', 'class', 'commodo',
  'condimentum', 'congue', 'consectetuer', 'consequat', 'conubia', 'convallis', 'cras', 'cubilia',
  'cum', 'curabitur', 'curae', 'cursus', 'dapibus', 'diam', 'dictum', 'dictumst', 'dignissim',
  'dis', 'dolor', 'donec', 'dui', 'duis', 'egestas', 'eget', 'eleifend', 'elementum', 'elit',
  'enim', 'erat', 'eros', 'est', 'et', 'etiam', 'eu', 'euismod', 'facilisi', 'facilisis', 'fames',
  'faucibus', 'felis', 'fermentum', 'feugiat', 'fringilla', 'fusce', 'gravida', 'habitant',
  'habitasse', 'hac', 'hendrerit', 'hymenaeos', 'iaculis', 'id', 'imperdiet', 'in', 'inceptos',
  'integer', 'interdum', 'ipsum', 'justo', 'lacinia', 'lacus', 'laoreet', 'lectus', 'leo',
  'libero', 'ligula', 'litora', 'lobortis', 'lorem', 'luctus', 'maecenas', 'magna', 'magnis',
  'malesuada', 'massa', 'mattis', 'mauris', 'metus', 'mi', 'molestie', 'mollis', 'montes', 'morbi',
  'mus', 'nam', 'nascetur', 'natoque', 'nec', 'neque', 'netus', 'nibh', 'nisi', 'nisl', 'non',
  'nonummy', 'nostra', 'nulla', 'nullam', 'nunc', 'odio', 'orci', 'ornare', 'parturient', 'pede',
  'pellentesque', 'penatibus', 'per', 'pharetra', 'phasellus', 'placerat', 'platea', 'porta',
  'porttitor', 'posuere', 'potenti', 'praesent', 'pretium', 'primis', 'proin', 'pulvinar', 'purus',
  'quam', 'quis', 'quisque', 'rhoncus', 'ridiculus', 'risus', 'rutrum', 'sagittis', 'sapien',
  'scelerisque', 'sed', 'sem', 'semper', 'senectus', 'sit', 'sociis', 'sociosqu', 'sodales',
  'sollicitudin', 'suscipit', 'suspendisse', 'taciti', 'tellus', 'tempor', 'tempus', 'tincidunt',
  'torquent', 'tortor', 'tristique', 'turpis', 'ullamcorper', 'ultrices', 'ultricies', 'urna',
  'ut', 'varius', 'vehicula', 'vel', 'velit', 'venenatis', 'vestibulum', 'vitae', 'vivamus',
  'viverra', 'volutpat', 'vulputate',
]

/** Python's `random.randrange(start, stop)`. */
function randrange(start: number, stop: number): number {
  if (stop <= start) throw valueError(`empty range for randrange() (${start}, ${stop}, ${stop - start})`)
  return start + Math.floor(Math.random() * (stop - start))
}

export function loremIpsum(n: number, html: boolean, min: number, max: number): string | Markup {
  const paragraphs: string[] = []
  // Words are at most 12 characters and a separator: 16 counted per word bounds the text.
  let size = 0
  for (let paragraph = 0; paragraph < n; paragraph++) {
    tick()
    size += 16
    if (size > MAX_STRING_LENGTH) throw stringPastLimit(`lipsum(${n}, min=${min}, max=${max})`)
    let nextCapitalized = true
    let lastComma = 0
    let lastFullstop = 0
    let last: string | null = null
    const words: string[] = []
    const count = randrange(min, max)
    for (let idx = 0; idx < count; idx++) {
      tick()
      size += 16
      if (size > MAX_STRING_LENGTH) throw stringPastLimit(`lipsum(${n}, min=${min}, max=${max})`)
      let word: string
      do word = WORDS[Math.floor(Math.random() * WORDS.length)]!
      while (word === last)
      last = word
      if (nextCapitalized) {
        word = word[0]!.toUpperCase() + word.slice(1)
        nextCapitalized = false
      }
      if (idx - randrange(3, 8) > lastComma) {
        lastComma = idx
        lastFullstop += 2
        word += ','
      }
      if (idx - randrange(10, 20) > lastFullstop) {
        lastComma = lastFullstop = idx
        word += '.'
        nextCapitalized = true
      }
      words.push(word)
    }
    let text = words.join(' ')
    if (text.endsWith(',')) text = text.slice(0, -1) + '.'
    else if (!text.endsWith('.')) text += '.'
    paragraphs.push(text)
  }
  if (!html) return paragraphs.join('\n\n')
  return new Markup(paragraphs.map((text) => `<p>${escapeHtml(text)}</p>`).join('\n'))
}
