// The Astro config: insitu goes in `vite.plugins`. Astro reads Markdown pages and content
// collections from disk, so write mode (INSITU_WRITE=1 here) is what makes regions show.
import { defineConfig } from 'astro/config'
import insitu from 'vite-plugin-insitu'

export default defineConfig({
  vite: {
    plugins: [insitu(process.env.INSITU_WRITE === '1' ? { write: true } : {})],
  },
})
