/**
 * One regular expression that matches exactly a set of file paths (for a bundler's
 * `watch.exclude`, which takes patterns, not a predicate).
 *
 * Contract: `exactPathsPattern(paths)` matches a string exactly when it is one of `paths`. The
 * paths share their prefixes in a trie, so the expression stays about as long as the paths'
 * distinct text, and a test costs about one pass over the tested string however many paths there
 * are (each alternation's branches start with distinct characters: no backtracking across them).
 * An empty set matches nothing.
 */

interface TrieNode {
  children: Map<string, TrieNode>
  end: boolean
}

export function exactPathsPattern(paths: Iterable<string>): RegExp {
  const root: TrieNode = { children: new Map(), end: false }
  let any = false
  for (const text of paths) {
    any = true
    let node = root
    for (const char of text) {
      let next = node.children.get(char)
      if (!next) {
        next = { children: new Map(), end: false }
        node.children.set(char, next)
      }
      node = next
    }
    node.end = true
  }
  if (!any) return /(?!)/
  return new RegExp(`^${emit(root)}$`, 'u')
}

function emit(node: TrieNode): string {
  // A run of single-child nodes is one literal.
  let literal = ''
  let current = node
  while (current.children.size === 1 && !current.end) {
    const [char, next] = current.children.entries().next().value as [string, TrieNode]
    literal += escape(char)
    current = next
  }
  if (current.children.size === 0) return literal
  const branches = [...current.children].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([char, next]) => escape(char) + emit(next))
  const group = branches.length === 1 ? branches[0]! : `(?:${branches.join('|')})`
  return literal + (current.end ? `(?:${group})?` : group)
}

function escape(char: string): string {
  return /[\\^$.*+?()[\]{}|/]/.test(char) ? `\\${char}` : char
}
