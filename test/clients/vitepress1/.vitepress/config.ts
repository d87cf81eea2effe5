// The VitePress config: insitu goes in `vite.plugins`. Write mode (INSITU_WRITE=1) keeps the
// Markdown on disk current, for VitePress features that read files from disk (local search,
// createContentLoader, <!--@include:--> partials).
import { defineConfig } from 'vitepress'
import insitu from 'vite-plugin-insitu'

export default defineConfig({
  title: 'insitu client',
  srcExclude: ['parts/**'],
  themeConfig: { search: { provider: 'local' } },
  vite: {
    plugins: [insitu(process.env.INSITU_WRITE === '1' ? { write: true } : {})],
  },
})
