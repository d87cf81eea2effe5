/**
 * Jinja2 3.1's `urlize` (utils.urlize): links in plain text.
 *
 * Contract: `urlize(text, options)` escapes the text (markupsafe), splits it on whitespace and
 * turns each word that is an http(s) URL, a `www.` / well-known-TLD domain or an e-mail address
 * into a link (`rel`, `target`, trimmed to `trimUrlLimit` characters + `...`), keeping leading
 * `(`/`<` and trailing `.,)>` punctuation outside the link, balancing brackets as Jinja does.
 */
import { escapeHtml } from './escape.js'

const HTTP = new RegExp(
  '^(' +
    '((https?://|www\\.)(([\\p{L}\\p{N}_%-]+\\.)+)?([a-z]{2,63}|xn--[\\p{L}\\p{N}_%]{2,59})' +
    '|([\\p{L}\\p{N}_%-]{2,63}\\.)+(com|net|int|edu|gov|org|info|mil)' +
    '|(https?://)((([\\d]{1,3})(\\.[\\d]{1,3}){3})|(\\[([\\da-f]{0,4}:){2}([\\da-f]{0,4}:?){1,6}\\])))' +
    '(?::[\\d]{1,5})?(?:[/?#]\\S*)?)$',
  'iu',
)
const EMAIL = /^\S+@[\p{L}\p{N}_][\p{L}\p{N}_.-]*\.[\p{L}\p{N}_]+$/u

export interface UrlizeOptions {
  trimUrlLimit: number | null
  rel: string | null
  target: string | null
  extraSchemes: string[]
}

export function urlize(text: string, options: UrlizeOptions): string {
  const trim = (url: string): string =>
    options.trimUrlLimit !== null && url.length > options.trimUrlLimit ? `${url.slice(0, options.trimUrlLimit)}...` : url
  const words = escapeHtml(text).split(/(\s+)/u)
  const relAttr = options.rel ? ` rel="${escapeHtml(options.rel)}"` : ''
  const targetAttr = options.target ? ` target="${escapeHtml(options.target)}"` : ''
  return words
    .map((word) => {
      let head = ''
      let middle = word
      let tail = ''
      const lead = /^([(<]|&lt;)+/.exec(middle)
      if (lead) {
        head = lead[0]
        middle = middle.slice(lead[0].length)
      }
      if (/(\)|>|\.|,|\n|&gt;)$/.test(middle)) {
        const trail = /([)>.,\n]|&gt;)+$/.exec(middle)
        if (trail) {
          tail = trail[0]
          middle = middle.slice(0, trail.index)
        }
      }
      for (const [open, close] of [['(', ')'], ['<', '>'], ['&lt;', '&gt;']] as const) {
        const opens = middle.split(open).length - 1
        if (opens <= middle.split(close).length - 1) continue
        const moves = Math.min(opens, tail.split(close).length - 1)
        for (let i = 0; i < moves; i++) {
          const end = tail.indexOf(close) + close.length
          middle += tail.slice(0, end)
          tail = tail.slice(end)
        }
      }
      if (HTTP.test(middle)) {
        const href = middle.startsWith('https://') || middle.startsWith('http://') ? middle : `https://${middle}`
        middle = `<a href="${href}"${relAttr}${targetAttr}>${trim(middle)}</a>`
      } else if (middle.startsWith('mailto:') && EMAIL.test(middle.slice(7))) {
        middle = `<a href="${middle}">${middle.slice(7)}</a>`
      } else if (middle.includes('@') && !middle.startsWith('www.') && !middle.includes(':') && EMAIL.test(middle)) {
        middle = `<a href="mailto:${middle}">${middle}</a>`
      } else {
        for (const scheme of options.extraSchemes) {
          if (middle !== scheme && middle.startsWith(scheme)) middle = `<a href="${middle}"${relAttr}${targetAttr}>${middle}</a>`
        }
      }
      return head + middle + tail
    })
    .join('')
}
