// One content collection loaded from disk by Astro's glob() loader.
import { defineCollection, z } from 'astro:content'
import { glob } from 'astro/loaders'

const notes = defineCollection({
  loader: glob({ pattern: '**/*.md', base: './src/content/notes' }),
  schema: z.object({ title: z.string() }),
})

export const collections = { notes }
