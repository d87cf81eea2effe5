// The playground's Vite config: the plugin straight from source, plus one module rule that
// turns data/*.csv into JavaScript through the `csv_module` transform of extensions/node-team.
import { defineConfig } from 'vite'
import insitu from '../src/index.ts'

export default defineConfig({
  plugins: [
    insitu({
      modules: [{ include: 'data/*.csv', transform: 'csv_module' }],
    }),
  ],
})
