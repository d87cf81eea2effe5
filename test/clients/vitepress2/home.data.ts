// A VitePress data loader: what createContentLoader reads of index.md (raw text from disk).
import { createContentLoader } from 'vitepress'

export default createContentLoader('index.md', {
  includeSrc: true,
  transform: (pages) => pages.map((page) => (page.src ?? '').match(/Zanzibar[a-z]+ [a-z]+/g) ?? []).flat(),
})
